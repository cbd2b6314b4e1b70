#include "io/quantised_blocks.hpp"

#include <exception>
#include <memory>
#include <mutex>

#include "threads/parallel.hpp"

namespace embed::io {

QuantisedTable read_quantised_table(const TensorEntry& entry, const ByteSource& source) {
    // load_table's checks and errors for the entry are the decoder's; decoding no rows runs them alone.
    Table no_rows(0, entry.shape.size() == 2 ? entry.shape[1] : 0);
    decode_rows<double>(entry, source, 0, 0, no_rows);
    const embed::ElementType type = *entry.type;  // the decoder accepted it above, so it is known
    const Index vocab = entry.shape[0];
    const Index dim = entry.shape[1];
    const Index row_size = row_bytes(type, dim);
    const Index bytes = vocab * row_size;  // the parser checked the tensor's bytes: this is entry.size
    auto blocks = std::make_unique_for_overwrite<std::byte[]>(static_cast<std::size_t>(bytes));
    // Mapped up front, huge pages where large, so each later pass over the blocks reads at full speed.
    detail::prefault_for_writing(blocks.get(), static_cast<std::size_t>(bytes));
    // Read by both cores, a block of rows each; parallel_for's pieces must not throw, and a read can (the file
    // shrank since it was opened): the first error is kept and thrown here.
    std::exception_ptr error;
    std::mutex error_mutex;
    detail::parallel_for(vocab, row_size, [&](Index begin, Index end) {
        try {
            source.read(entry.offset + static_cast<std::uint64_t>(begin * row_size),
                        static_cast<std::uint64_t>((end - begin) * row_size), blocks.get() + begin * row_size);
        } catch (...) {
            const std::lock_guard lock(error_mutex);
            if (!error) error = std::current_exception();
        }
    });
    if (error) std::rethrow_exception(error);
    return QuantisedTable(type, vocab, dim, std::shared_ptr<const std::byte[]>(std::move(blocks)), bytes);
}

}  // namespace embed::io
