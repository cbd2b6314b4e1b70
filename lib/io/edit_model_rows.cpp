// The rows of an edited table and the checks on an edit, shared by edit_model's formats.

#include "io/edit_model_rows.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <new>
#include <set>
#include <sstream>
#include <stdexcept>

#include "edit_rows.hpp"
#include "embed/scan.hpp"
#include "floating_point/float_mode.hpp"
#include "io/file_output.hpp"
#include "floating_point/narrow_values.hpp"

namespace embed::io {

namespace {

/// Copies count bytes of source from offset into out's file at its current offset with copy_file_range, in the
/// kernel (no trip through this process's memory; a reflink where the file system shares blocks). Returns the
/// bytes copied: fewer than count when the kernel cannot copy between these files (EXDEV, ENOSYS, EINVAL,
/// EOPNOTSUPP, ...: the caller copies the rest itself) or the source ends early (the caller's read then says
/// so). A failed write (ENOSPC, EFBIG, EIO) throws filesystem_error naming out's file.
std::uint64_t copied_in_kernel(const FileSource& source, std::uint64_t offset, std::uint64_t count, FileOutput& out) {
    std::uint64_t done = 0;
    auto from = static_cast<off_t>(offset);
    while (done < count) {
        const std::uint64_t step = std::min<std::uint64_t>(count - done, std::uint64_t{1} << 30);
        const ssize_t moved =
            ::copy_file_range(source.fd(), &from, out.fd(), nullptr, static_cast<std::size_t>(step), 0);
        if (moved < 0 && errno == EINTR) continue;
        if (moved < 0 && (errno == ENOSPC || errno == EFBIG || errno == EIO || errno == EDQUOT)) {
            const std::error_code error(errno, std::generic_category());
            out.buffer().fail(error.value());
            out.buffer().advanced(done);
            throw std::filesystem::filesystem_error("cannot write", out.path(), error);
        }
        if (moved <= 0) break;
        done += static_cast<std::uint64_t>(moved);
    }
    out.buffer().advanced(done);
    return done;
}

}  // namespace

/// Copies bytes [offset, offset + count) of source to out: in the kernel when out is a file (the writers'
/// FileOutput), else, and for whatever the kernel leaves, a chunk at a time through a buffer.
void copy_bytes(const FileSource& source, std::uint64_t offset, std::uint64_t count, std::ostream& out) {
    if (auto* file = dynamic_cast<FileOutput*>(&out); file != nullptr && count > 0) {
        if (!file->buffer().flush_buffer()) {
            out.setstate(std::ios_base::badbit);
            return;
        }
        const std::uint64_t done = copied_in_kernel(source, offset, count, *file);
        offset += done;
        count -= done;
    }
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

/// tensor with its callback set to write entry's rows [0, rows) as stored in source, but the rows in changed
/// (id -> encoded bytes), then the appended rows' bytes.
GgufTensor kept_rows_copied(GgufTensor tensor, const io::TensorEntry& entry, const FileSource& source, Index rows,
                            std::int64_t row_size, std::map<Index, std::string> changed, std::string appended) {
    tensor.write = [&source, offset = entry.offset, rows, row_size = static_cast<std::uint64_t>(row_size),
                    changed = std::move(changed), appended = std::move(appended)](std::ostream& out) {
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

/// The column sums (d) of entry's rows in ascending order, in double, as mean_of adds them (each column summed
/// over the rows in order): rows in ids (ascending, unique) are left out when replacement is empty, else read
/// as replacement's one row. The file is decoded a block of rows at a time into a buffer that stays in the
/// cache while it is added, so the table is never held whole. On the caller's thread: the pass is bound by
/// reading the file, and a block too small to leave the cache is too small to share between cores.
template <class Scalar>
RowVector streamed_column_sums(const io::TensorEntry& entry, const FileSource& source, const std::vector<Index>& ids,
                               const BasicTable<Scalar>& replacement) {
    const Index rows = entry.shape[0];
    const Index d = entry.shape[1];
    const Index block_rows = std::max<Index>(1, (Index{512} << 10) / (d * static_cast<Index>(sizeof(Scalar))));
    BasicTable<Scalar> block(std::min(block_rows, rows), d);
    RowVector sums = RowVector::Zero(d);
    double* const column_sums = sums.data();
    const auto add = [&](const Scalar* row) {
        for (Index c = 0; c < d; ++c) column_sums[c] += detail::widen(row[c]);
    };
    auto next_id = ids.begin();
    for (Index first = 0; first < rows; first += block_rows) {
        const Index count = std::min(block_rows, rows - first);
        io::decode_rows<Scalar>(entry, source, first, count, block.topRows(count));
        for (Index r = first; r < first + count; ++r) {
            if (next_id == ids.end() || *next_id != r) {
                add(block.data() + (r - first) * d);
            } else {
                ++next_id;
                if (replacement.size() > 0) add(replacement.data());
            }
        }
    }
    return sums;
}

/// count rows (count, d) of the value init gives (mean: sums / divisor rounded once to Scalar; zeros: 0).
template <class Scalar>
BasicTable<Scalar> repeated_rows(const RowVector& sums, Index divisor, Index count, RowInit init) {
    BasicTable<Scalar> out(count, sums.size());
    if (count == 0) return out;
    for (Index c = 0; c < sums.size(); ++c) {
        const double value = init == RowInit::zeros ? 0.0 : sums[c] / static_cast<double>(divisor);
        out(0, c) = detail::narrow_to<Scalar>(value);
    }
    for (Index r = 1; r < count; ++r) out.row(r) = out.row(0);
    return out;
}

/// The edit of a table kept in its type by mean or zeros, without decoding it whole: the re-initialised rows
/// (one row, the mean of the others) and the appended rows (the mean of the rows after re-initialisation),
/// each pass over the file adding the rows as reinitialise_rows and resize_rows add them, so the values are
/// theirs bit for bit. Returns the re-initialised row (1, d; none without ids) and the appended rows.
template <class Scalar>
std::pair<BasicTable<Scalar>, BasicTable<Scalar>> streamed_edit(const io::TensorEntry& entry, const FileSource& source,
                                                                const std::vector<Index>& ids, Index appended,
                                                                RowInit init) {
    const Index rows = entry.shape[0];
    const Index d = entry.shape[1];
    const detail::DefaultFloatMode float_mode;
    const BasicTable<Scalar> none(0, d);
    const auto kept = rows - static_cast<Index>(ids.size());
    if (!ids.empty() && kept == 0 && init != RowInit::zeros) {
        throw std::invalid_argument("re-initialising rows by \"" + std::string(row_init_name(init)) +
                                    "\" needs at least one source row to take the mean of, and there is none; "
                                    "use \"zeros\"");
    }
    if (appended > 0 && rows == 0 && init != RowInit::zeros) {
        throw std::invalid_argument("growing a table by \"" + std::string(row_init_name(init)) +
                                    "\" needs at least one source row to take the mean of, and there is none; "
                                    "use \"zeros\"");
    }
    const bool zeros = init == RowInit::zeros;
    const auto sums = [&](const BasicTable<Scalar>& replacement) -> RowVector {
        return zeros ? RowVector::Zero(d) : streamed_column_sums(entry, source, ids, replacement);
    };
    BasicTable<Scalar> fresh = ids.empty() ? none : repeated_rows<Scalar>(sums(none), kept, 1, init);
    BasicTable<Scalar> added =
        appended == 0 ? BasicTable<Scalar>(0, d) : repeated_rows<Scalar>(sums(fresh), rows, appended, init);
    return {std::move(fresh), std::move(added)};
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
    // A byte count past 64 bits is a table no memory holds: the same answer as an allocation that fails.
    Index tensor_bytes = 0;
    if (__builtin_mul_overflow(row_bytes(written, d), rows_after, &tensor_bytes)) throw std::bad_alloc();
    GgufTensor tensor{entry.name, {static_cast<std::uint64_t>(d), static_cast<std::uint64_t>(rows_after)},
                      io::ggml_type_id(written), static_cast<std::uint64_t>(tensor_bytes), {}};
    const Index appended = std::max<Index>(rows_after - rows, 0);
    if (written == stored && edits.init != RowInit::sampled) {
        // Every new row is one value: a pass over the file per mean, the table never held.
        auto [fresh, added] = streamed_edit<Scalar>(entry, source, ids, appended, edits.init);
        std::map<Index, std::string> changed;
        if (!ids.empty()) {
            const std::string row = encoded_rows(fresh, 0, 1, written);
            for (const Index id : ids) changed.emplace(id, row);
        }
        return kept_rows_copied(tensor, entry, source, rows, row_bytes(written, d), std::move(changed),
                                encoded_appended_rows(added, edits.init, written));
    }
    BasicTable<Scalar> table = io::decode_table<Scalar>(entry, source);
    detail::reinitialise_rows_in_place(table, Ids(ids), edits.init, edits.seed);
    BasicTable<Scalar> added = detail::appended_rows<Scalar>(view_of(table), appended, edits.init, edits.seed);
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
    return kept_rows_copied(tensor, entry, source, rows, row_bytes(written, d), std::move(changed),
                            encoded_appended_rows(added, edits.init, written));
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
    // The first id whose token or text equals a token to add (as Vocabulary::find matches), in one pass over
    // the vocabulary for all of them: find is a pass per token, a thousand passes for a thousand tokens.
    std::map<std::string, Index, std::less<>> existing;
    if (!edits.allow_duplicates) {
        const std::set<std::string, std::less<>> wanted(edits.add_tokens.begin(), edits.add_tokens.end());
        for (Index id = 0; id < vocabulary.size(); ++id) {
            if (vocabulary.missing(id)) continue;
            const std::string& token = vocabulary.token(id);
            if (wanted.contains(token)) existing.try_emplace(token, id);
            if (const std::string text = vocabulary.text(id); wanted.contains(text)) existing.try_emplace(text, id);
        }
    }
    std::set<std::string> seen;
    for (const std::string& token : edits.add_tokens) {
        if (!seen.insert(token).second) {
            throw std::invalid_argument("token to add '" + token + "' is given twice");
        }
        if (const auto found = existing.find(token); found != existing.end()) {
            throw std::invalid_argument("token to add '" + token + "' already exists as id " +
                                        std::to_string(found->second) + " (duplicates not allowed)");
        }
    }
}

Index padded(Index rows, Index k) {
    if (k < 0) throw std::invalid_argument("pad_to_multiple_of is " + std::to_string(k) + "; allowed: k >= 1, or 0 for none");
    if (k == 0 || rows % k == 0) return rows;
    return (rows / k + 1) * k;
}

}  // namespace embed::io
