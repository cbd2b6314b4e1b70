#pragma once
// A cursor over a file's bytes that never reads past the end: every read checks
// what is left first and throws FileFormatError naming the field otherwise. The
// bytes are copied from the source a window at a time, so a header of many
// small fields costs few reads.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "io/formats.hpp"

namespace embed::io {

/// Little-endian fields read in order from a ByteSource, each checked against what remains.
class ByteReader {
public:
    explicit ByteReader(const ByteSource& source) : source_(source) {}

    /// Bytes not read yet.
    std::uint64_t remaining() const { return source_.size() - position_; }
    /// Offset of the next byte to read.
    std::uint64_t position() const { return position_; }

    /// Throws FileFormatError "<field> needs <n> bytes at offset <p>, but the file has <r> left" unless n remain.
    void require(std::uint64_t n, std::string_view field) const {
        if (n > remaining()) {
            fail(std::string(field) + " needs " + std::to_string(n) + " bytes at offset " +
                 std::to_string(position_) + ", but the file has " + std::to_string(remaining()) + " left");
        }
    }

    /// The next n bytes, checked; valid until the next call that reads.
    Bytes take(std::uint64_t n, std::string_view field) {
        require(n, field);
        const bool in_window = position_ >= window_start_ && position_ - window_start_ + n <= window_.size();
        if (!in_window) {
            window_start_ = position_;
            window_.resize(static_cast<std::size_t>(std::max(n, std::min(window_bytes, remaining()))));
            source_.read(position_, window_.size(), window_.data());
        }
        const Bytes out(window_.data() + (position_ - window_start_), static_cast<std::size_t>(n));
        position_ += n;
        return out;
    }

    /// Skips n bytes, checked, without reading them.
    void skip(std::uint64_t n, std::string_view field) {
        require(n, field);
        position_ += n;
    }

    /// An unsigned little-endian integer of sizeof(T) bytes.
    template <typename T>
    T little_endian(std::string_view field) {
        const Bytes raw = take(sizeof(T), field);
        T value = 0;
        for (std::size_t i = sizeof(T); i-- > 0;) {
            value = static_cast<T>((value << 8) | static_cast<T>(std::to_integer<std::uint8_t>(raw[i])));
        }
        return value;
    }

    std::uint8_t u8(std::string_view field) { return little_endian<std::uint8_t>(field); }
    std::uint16_t u16(std::string_view field) { return little_endian<std::uint16_t>(field); }
    std::uint32_t u32(std::string_view field) { return little_endian<std::uint32_t>(field); }
    std::uint64_t u64(std::string_view field) { return little_endian<std::uint64_t>(field); }

    /// The next n bytes as text, checked.
    std::string text(std::uint64_t n, std::string_view field) {
        const Bytes raw = take(n, field);
        return std::string(reinterpret_cast<const char*>(raw.data()), raw.size());
    }

    /// Throws FileFormatError with message, prefixed by the file's path.
    [[noreturn]] void fail(const std::string& message) const { throw FileFormatError(source_.path(), message); }

private:
    /// Bytes read ahead at a time: a GGUF vocabulary of many short strings is a few reads, not one per field.
    static constexpr std::uint64_t window_bytes = std::uint64_t{1} << 16;

    const ByteSource& source_;
    std::uint64_t position_ = 0;
    std::vector<std::byte> window_;      // bytes [window_start_, window_start_ + window_.size()) of the source
    std::uint64_t window_start_ = 0;
};

}  // namespace embed::io
