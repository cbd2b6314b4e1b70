#pragma once
// A file mapped read-only into memory. Parsers see its bytes; the decoder
// drops pages it has converted, so loading a table costs the table's memory
// and not the file's as well.

#include <cstdint>
#include <filesystem>

#include "io/formats.hpp"

namespace embed::io {

/// A read-only private mapping of a whole file; an empty file maps to no bytes.
class MappedFile {
public:
    /// Throws std::filesystem::filesystem_error when the file cannot be opened, measured or mapped.
    explicit MappedFile(const std::filesystem::path& file);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    /// The file's bytes.
    Bytes bytes() const { return {static_cast<const std::byte*>(data_), size_}; }

    /// Tells the kernel the bytes [offset, offset + size) and the rest of the page they start in will not be
    /// read again: those pages leave this process's memory (they stay in the page cache and come back if read).
    void release(std::uint64_t offset, std::uint64_t size) const;

private:
    void* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace embed::io
