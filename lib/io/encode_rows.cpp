#include "io/encode_rows.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "floating_point/half.hpp"
#include "io/quantise.hpp"
#include "floating_point/narrow_values.hpp"
#include "floating_point/float_mode.hpp"
#include "threads/parallel.hpp"

namespace embed::io {
namespace {

/// What is wrong with a row, if anything: the first refused value.
struct Problem {
    enum Kind { none, overflow, not_finite, scale_overflow } kind = none;
    Index column = 0;
    double value = 0.0;
};

/// The shortest text that reads back as x ("65520", "1e+300", "nan").
std::string number_text(double x) {
    char text[32];
    const auto result = std::to_chars(text, text + sizeof text, x);
    return std::string(text, result.ptr);
}

std::string largest_finite_text(ElementType type) {
    switch (type) {
        case ElementType::f16: return "65504";
        case ElementType::bf16: return number_text(std::ldexp(255.0, 120));
        default: return number_text(static_cast<double>(std::numeric_limits<float>::max()));
    }
}

[[noreturn]] void refuse(const Problem& problem, Index row, ElementType type) {
    const std::string name(element_type_name(type));
    const std::string where = "row " + std::to_string(row) + ", column " + std::to_string(problem.column);
    const std::string value = number_text(problem.value);
    if (problem.kind == Problem::not_finite) {
        throw std::invalid_argument("value " + value + " at " + where + " cannot be stored as " + name +
                                    ": the quantised types hold finite values only");
    }
    if (problem.kind == Problem::scale_overflow) {
        throw std::invalid_argument("value " + value + " at " + where + " is too large for " + name +
                                    ": its block's fp16 scale would be infinite (allow overflow to write it so)");
    }
    const std::string target = is_quantised(type) ? "f32, which " + name + " is quantised from," : name;
    throw std::invalid_argument("value " + value + " at " + where + " overflows " + target +
                                " (largest finite " + largest_finite_text(is_quantised(type) ? ElementType::f32 : type) +
                                "): it would round to infinity (allow overflow to write infinity)");
}

void put_le(std::byte* out, std::uint64_t bits, int bytes) {
    for (int i = 0; i < bytes; ++i, bits >>= 8) out[i] = static_cast<std::byte>(bits & 0xFF);
}

bool overflowed(double given, double stored) { return std::isfinite(given) && std::isinf(stored); }

/// One value per element: row (d) as type into out; the first overflow, unless allowed.
template <class Scalar>
Problem encode_plain(const Scalar* row, Index d, ElementType type, bool allow_overflow, std::byte* out) {
    Problem problem;
    for (Index c = 0; c < d; ++c) {
        const double x = detail::widen(row[c]);
        double stored = 0.0;
        switch (type) {
            case ElementType::f64:
                put_le(out + 8 * c, std::bit_cast<std::uint64_t>(x), 8);
                continue;
            case ElementType::f32: {
                const float narrow = detail::narrow_to_f32(x);
                put_le(out + 4 * c, std::bit_cast<std::uint32_t>(narrow), 4);
                stored = narrow;
                break;
            }
            case ElementType::f16: {
                const std::uint16_t bits = half_bits(x);
                put_le(out + 2 * c, bits, 2);
                stored = detail::half_to_double(bits);
                break;
            }
            default: {
                const std::uint16_t bits = bfloat16_bits(x);
                put_le(out + 2 * c, bits, 2);
                stored = detail::bfloat16_to_double(bits);
                break;
            }
        }
        if (!allow_overflow && problem.kind == Problem::none && overflowed(x, stored)) {
            problem = {Problem::overflow, c, x};
        }
    }
    return problem;
}

/// The column of the largest magnitude among row's values [first, first + count): what a block's
/// infinite scale comes from.
Index largest_in(const std::vector<float>& values, Index first, Index count) {
    Index best = first;
    for (Index c = first; c < first + count; ++c) {
        if (std::fabs(values[static_cast<std::size_t>(c)]) > std::fabs(values[static_cast<std::size_t>(best)])) best = c;
    }
    return best;
}

/// Quantised: row (d) rounded to float32, then ggml's blocks into out; the first value refused.
template <class Scalar>
Problem encode_quantised(const Scalar* row, Index d, ElementType type, bool allow_overflow, std::byte* out,
                         std::vector<float>& floats) {
    floats.resize(static_cast<std::size_t>(d));
    for (Index c = 0; c < d; ++c) {
        const double x = detail::widen(row[c]);
        if (!std::isfinite(x)) return {Problem::not_finite, c, x};
        const float narrow = detail::narrow_to_f32(x);
        if (std::isinf(narrow)) return {Problem::overflow, c, x};
        floats[static_cast<std::size_t>(c)] = narrow;
    }
    quantise(type, floats.data(), static_cast<std::size_t>(d), out);
    if (allow_overflow) return {};
    const Index values = block_values(type);
    const Index bytes = block_bytes(type);
    for (Index block = 0; block < d / values; ++block) {
        const std::byte* at = out + block * bytes;
        for (const int offset : half_scale_offsets(type)) {
            const auto bits = static_cast<std::uint16_t>(std::to_integer<unsigned>(at[offset]) |
                                                         (std::to_integer<unsigned>(at[offset + 1]) << 8));
            if ((bits & 0x7C00) == 0x7C00) {
                const Index column = largest_in(floats, block * values, values);
                return {Problem::scale_overflow, column, static_cast<double>(floats[static_cast<std::size_t>(column)])};
            }
        }
    }
    return {};
}

}  // namespace

template <class Scalar>
void write_rows(std::ostream& out, BasicTableView<Scalar> table, ElementType type, bool allow_overflow) {
    const detail::DefaultFloatMode float_mode;
    const Index d = table.cols();
    const Index bytes_per_row = row_bytes(type, d);
    const Index rows_per_block = std::max<Index>(1, (Index{4} << 20) / std::max<Index>(bytes_per_row, 1));
    const bool quantised = is_quantised(type);
    std::vector<std::byte> buffer;
    std::vector<Problem> problems;
    for (Index first = 0; first < table.rows(); first += rows_per_block) {
        const Index count = std::min(rows_per_block, table.rows() - first);
        buffer.resize(static_cast<std::size_t>(count * bytes_per_row));
        problems.assign(static_cast<std::size_t>(count), Problem{});
        detail::parallel_for(count, quantised ? 64 * d : d, [&](Index begin, Index end) {
            std::vector<float> floats;
            for (Index r = begin; r < end; ++r) {
                const Scalar* row = table.data() + (first + r) * d;
                std::byte* to = buffer.data() + r * bytes_per_row;
                problems[static_cast<std::size_t>(r)] = quantised ? encode_quantised(row, d, type, allow_overflow, to, floats)
                                                                  : encode_plain(row, d, type, allow_overflow, to);
            }
        });
        for (Index r = 0; r < count; ++r) {
            if (problems[static_cast<std::size_t>(r)].kind != Problem::none) refuse(problems[static_cast<std::size_t>(r)], first + r, type);
        }
        out.write(reinterpret_cast<const char*>(buffer.data()), static_cast<std::streamsize>(buffer.size()));
    }
}

template void write_rows<double>(std::ostream&, BasicTableView<double>, ElementType, bool);
template void write_rows<float>(std::ostream&, BasicTableView<float>, ElementType, bool);
template void write_rows<Eigen::bfloat16>(std::ostream&, BasicTableView<Eigen::bfloat16>, ElementType, bool);

}  // namespace embed::io
