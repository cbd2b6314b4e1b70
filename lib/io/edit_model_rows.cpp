// The rows of an edited table and the checks on an edit, shared by edit_model's formats.

#include "io/edit_model_rows.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "edit_rows.hpp"
#include "embed/scan.hpp"

namespace embed::io {

/// Copies bytes [offset, offset + count) of source to out a chunk at a time.
void copy_bytes(const FileSource& source, std::uint64_t offset, std::uint64_t count, std::ostream& out) {
    constexpr std::uint64_t chunk = std::uint64_t{1} << 20;
    std::vector<std::byte> buffer(static_cast<std::size_t>(std::min(chunk, count)));
    while (count > 0) {
        const std::uint64_t n = std::min(chunk, count);
        source.read(offset, n, buffer.data());
        out.write(reinterpret_cast<const char*>(buffer.data()), static_cast<std::streamsize>(n));
        offset += n;
        count -= n;
    }
}

embed::ElementType public_type(const io::TensorEntry& entry, const std::filesystem::path& file) {
    if (!entry.type || entry.shape.size() != 2) {
        throw FileFormatError(file, "tensor '" + entry.name + "' of type " + entry.dtype +
                                        " is not a 2-D table edit_model can rewrite");
    }
    return *entry.type;
}

namespace {

/// The rows [first, first + count) of table encoded as type.
template <class Scalar>
std::string encoded_rows(const BasicTable<Scalar>& table, Index first, Index count, embed::ElementType type) {
    std::ostringstream out;
    const BasicTableView<Scalar> rows(table.data() + first * table.cols(), count, table.cols());
    io::write_rows(out, rows, type, false);
    return std::move(out).str();
}

/// The appended rows encoded as type. mean and zeros make every row the same values, and a row is whole
/// blocks, so the first row's bytes are encoded once and repeated: quantising a Llama-sized row costs more
/// than copying it, a thousand times over.
template <class Scalar>
std::string encoded_appended_rows(const BasicTable<Scalar>& added, RowInit init, embed::ElementType type) {
    if (added.rows() == 0 || init == RowInit::sampled) return encoded_rows(added, 0, added.rows(), type);
    const std::string row = encoded_rows(added, 0, 1, type);
    std::string out;
    out.reserve(row.size() * static_cast<std::size_t>(added.rows()));
    for (Index i = 0; i < added.rows(); ++i) out += row;
    return out;
}

/// One table rewritten: its new rows (rows_after, d) by the edits, as a GGUF tensor (name, ne, type, bytes
/// and the callback that writes them). The decoded table is held once: the re-initialised rows are set in it
/// in place and the appended rows computed beside it, never a second (rows_after, d) copy; in the stored
/// type it is freed on return, before the file is written.
template <class Scalar>
GgufTensor edited_tensor(const io::TensorEntry& entry, const FileSource& source, std::vector<Index> ids,
                         Index rows_after, const ModelEdits& edits) {
    const embed::ElementType stored = public_type(entry, source.path());
    const embed::ElementType written = edits.type.value_or(stored);
    const Index rows = entry.shape[0];
    const Index d = entry.shape[1];
    if (d % block_values(written) != 0) {
        throw std::invalid_argument("tensor '" + entry.name + "' has rows of " + std::to_string(d) +
                                    " values, not a multiple of " + std::string(element_type_name(written)) +
                                    "'s block of " + std::to_string(block_values(written)));
    }
    BasicTable<Scalar> table = io::decode_table<Scalar>(entry, source);
    detail::reinitialise_rows_in_place(table, Ids(ids), edits.init, edits.seed);
    BasicTable<Scalar> added =
        detail::appended_rows<Scalar>(view_of(table), std::max<Index>(rows_after - rows, 0), edits.init, edits.seed);
    GgufTensor tensor{entry.name, {static_cast<std::uint64_t>(d), static_cast<std::uint64_t>(rows_after)},
                      io::ggml_type_id(written), static_cast<std::uint64_t>(row_bytes(written, d) * rows_after), {}};
    if (written != stored) {
        // Every row is re-encoded once from the values the file holds.
        tensor.write = [table = std::move(table), added = std::move(added), written](std::ostream& out) {
            io::write_rows(out, view_of(table), written, false);
            io::write_rows(out, view_of(added), written, false);
        };
        return tensor;
    }
    std::map<Index, std::string> changed;
    for (const Index id : ids) changed.emplace(id, encoded_rows(table, id, 1, written));
    // The rows kept are copied from the file as stored when the tensor is written; the decoded table goes here.
    std::string appended = encoded_appended_rows(added, edits.init, written);
    const std::uint64_t row_size = static_cast<std::uint64_t>(row_bytes(written, d));
    tensor.write = [&source, offset = entry.offset, rows, row_size, changed = std::move(changed),
                    appended = std::move(appended)](std::ostream& out) {
        Index next = 0;  // the first row not written yet
        const auto copy_until = [&](Index end) {
            copy_bytes(source, offset + static_cast<std::uint64_t>(next) * row_size,
                       static_cast<std::uint64_t>(end - next) * row_size, out);
        };
        for (const auto& [id, bytes] : changed) {
            copy_until(id);
            out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
            next = id + 1;
        }
        copy_until(rows);
        out.write(appended.data(), static_cast<std::streamsize>(appended.size()));
    };
    return tensor;
}

}  // namespace

GgufTensor edited_tensor(const io::TensorEntry& entry, const FileSource& source, const std::vector<Index>& ids,
                         Index rows_after, const ModelEdits& edits) {
    switch (public_type(entry, source.path())) {
        case embed::ElementType::f64: return edited_tensor<double>(entry, source, ids, rows_after, edits);
        case embed::ElementType::bf16: return edited_tensor<Eigen::bfloat16>(entry, source, ids, rows_after, edits);
        default: return edited_tensor<float>(entry, source, ids, rows_after, edits);
    }
}

/// The ids to re-initialise, ascending and once each: those asked for and, when asked, the scan's candidates.
std::vector<Index> rows_to_reinitialise(const std::filesystem::path& source, const Tying& tying, Index rows,
                                        const Vocabulary& vocabulary, const ModelEdits& edits) {
    std::set<Index> ids;
    for (const Index id : edits.reinitialise) {
        if (id < 0 || id >= rows) {
            throw std::out_of_range("row id " + std::to_string(id) + " to re-initialise is outside [0, " +
                                    std::to_string(rows) + ")");
        }
        ids.insert(id);
    }
    if (edits.reinitialise_under_trained) {
        const Table input = load_table(source, tying.embedding);
        ScanOptions options;
        for (const Index id : unused_ids(vocabulary)) {
            if (id < rows) options.reference_ids.push_back(id);
        }
        const VocabularyScan scan = tying.tied || tying.output.empty()
                                        ? scan_vocabulary(input, input, options)
                                        : scan_vocabulary(input, load_table(source, tying.output), options);
        ids.insert(scan.candidates.begin(), scan.candidates.end());
    }
    return {ids.begin(), ids.end()};
}

void refuse_existing_tokens(const Vocabulary& vocabulary, const ModelEdits& edits) {
    std::set<std::string> seen;
    for (const std::string& token : edits.add_tokens) {
        if (!seen.insert(token).second) {
            throw std::invalid_argument("token to add '" + token + "' is given twice");
        }
        if (edits.allow_duplicates) continue;
        if (const std::vector<Index> found = vocabulary.find(token); !found.empty()) {
            throw std::invalid_argument("token to add '" + token + "' already exists as id " +
                                        std::to_string(found.front()) + " (duplicates not allowed)");
        }
    }
}

Index padded(Index rows, Index k) {
    if (k < 0) throw std::invalid_argument("pad_to_multiple_of is " + std::to_string(k) + "; allowed: k >= 1, or 0 for none");
    if (k == 0 || rows % k == 0) return rows;
    return (rows / k + 1) * k;
}

}  // namespace embed::io
