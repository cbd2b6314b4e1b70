#pragma once
// The all-pairs GEMM for AVX-512 (dot_all_pairs), for b rows stored in
// double, float32 or bfloat16. Internal; included only by the kernel files,
// whose AVX-512 functions inline it, each with its own way of loading eight
// stored values as doubles.
//
// Every entry is dot_kernel's sum: lane j of a pair adds the products of
// values j, j + 8, j + 16, ... in turn, starting from +0.0; the tail values
// past the last whole block of 8 are then added into lanes 0, 1, ..., and the
// eight lanes pairwise. Copying values to other addresses changes none of
// that. So the a rows are packed: each group of 4 is stored block of 8 by
// block of 8, one row after another ([group][block][row][8]), and the kernel
// reads them as one stream of whole cache lines. The b rows (6 per register
// block) are read where they lie when they are doubles starting on cache
// lines; otherwise (float32 or bfloat16, rows off the lines, a part group)
// each group of 6 is first widened into 6 rows that start on lines. Either
// way every stored value is read once and no widened copy of the table is kept.
//
// Why a packed and b in place: of the layouts tried (both rows where they
// lie, both packed, a packed and b in place) it came nearest the arithmetic
// alone, ahead of OpenBLAS dgemm. Rows longer than 1024 values are met in
// k blocks of 512 (their lane sums kept in memory between blocks), so that a
// block of the b group stays in L1 and of the packed a rows in L2, which
// speeds wide rows and leaves narrow ones as they were.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/base.hpp"
#include "kernels/multiversion.hpp"
#include "floating_point/narrow_values.hpp"
#include "kernels/row_loops.hpp"

// Lanes are 64-byte vectors passed between always-inlined functions of the
// kernel files that include this header.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed::detail::packed_gemm {

/// a rows per register block: 4 x 6 accumulators, 6 b rows and an a row fill 31 of AVX-512's 32 registers.
inline constexpr Index kARows = 4;
/// b rows per register block, and per group the b rows are read (or widened) in.
inline constexpr Index kBRows = 6;
/// a rows packed at once: each group of b rows is read (or widened) once per this many a rows.
inline constexpr Index kMaxPackedARows = 64;
/// Fewer a rows are packed at once where 64 would take more than this (d > 4096).
inline constexpr Index kMaxPackedABytes = Index{2} << 20;
/// Rows of up to this many whole values are read whole; longer ones kKBlockValues at a time.
inline constexpr Index kMaxUnblockedValues = 1024;
/// Values per k block of long rows: a block of 6 b rows (24 KiB) stays in L1 and the 64 packed a rows'
/// block (256 KiB) in L2 while they meet.
inline constexpr Index kKBlockValues = 512;
/// Groups of 6 b rows met by each k block of the packed a rows before the next k block is read.
inline constexpr Index kBGroupsPerChunk = 8;

/// Room for `values` doubles starting on a cache line: the calling thread's own, kept from call to call
/// while small, or this call's own when larger. Why kept: a fresh buffer comes as fresh pages, and with
/// one thread faulting in and zeroing a fresh 256 KiB on every call a small float32 batch took several
/// times the double batch's time. Its contents are never read before they are written.
template <int Which>
class PackBuffer {
public:
    explicit PackBuffer(Index values) {
        constexpr Index kKeptValues = (Index{4} << 20) / Index{sizeof(double)};
        const auto size = static_cast<std::size_t>(values + kLineValues);
        thread_local std::vector<double> kept;
        std::vector<double>& storage = values <= kKeptValues ? kept : own_;
        if (storage.size() < size) storage.resize(size);
        start_ = storage.data();
        while (reinterpret_cast<std::uintptr_t>(start_) % row_loops::kLineBytes != 0) ++start_;
    }
    double* data() { return start_; }

private:
    static constexpr Index kLineValues = static_cast<Index>(row_loops::kLineBytes / sizeof(double));
    std::vector<double> own_;
    double* start_ = nullptr;
};

/// The Load of double b rows: eight values as they are.
struct LoadDoubles {
    [[gnu::always_inline]] static Lanes lanes(const double* p) {
        Lanes values;
        std::memcpy(&values, p, sizeof values);
        return values;
    }
};

/// The tail values (past the whole blocks of 8) of `count` rows widened into tails[row * 8 ..], zero
/// padded, and zeros for the rows from count to `padded`.
template <class Scalar>
[[gnu::always_inline]] inline void copy_tails(const Scalar* rows, Index count, Index padded, Index dim,
                                              double* tails) {
    const Index whole = dim - dim % kLanes;
    for (Index r = 0; r < padded; ++r) {
        double* tail = tails + r * kLanes;
        std::fill(tail, tail + kLanes, 0.0);
        if (r < count) {
            for (Index i = whole; i < dim; ++i) tail[i - whole] = widen(rows[r * dim + i]);
        }
    }
}

/// Packs `count` a rows of `dim` values (dim apart) as groups of 4: group g holds, for each of the
/// `dim / 8` whole blocks, its 4 rows' eight values of that block one row after another, so
/// packed[((g * blocks + j) * 4 + r) * 8 + v] = row 4 g + r, value 8 j + v. The tail values (dim % 8 of
/// them) go to tails[row * 8 ..], zero padded. Rows from count up to the last whole group are zeros:
/// their products are computed and dropped.
[[gnu::always_inline]] inline void pack_a_groups(const double* rows, Index count, Index dim, double* packed,
                                                 double* tails) {
    const Index blocks = dim / kLanes;
    const Index padded = (count + kARows - 1) / kARows * kARows;
    for (Index r = 0; r < padded; ++r) {
        double* to = packed + (r / kARows) * blocks * kARows * kLanes + (r % kARows) * kLanes;
        for (Index j = 0; j < blocks; ++j) {
            double* block = to + j * kARows * kLanes;
            if (r < count) {
                std::memcpy(block, rows + r * dim + j * kLanes, kLanes * sizeof(double));
            } else {
                std::fill(block, block + kLanes, 0.0);
            }
        }
    }
    if (dim % kLanes > 0) copy_tails(rows, count, padded, dim, tails);
}

/// Values [first, first + len) of `count` b rows of `dim` values (dim apart), widened by Load into kBRows
/// rows `len` apart in `widened` (a buffer on a cache line; len is a multiple of 8, so every row starts on
/// one); the rows from count on are zeros, whose products are computed and dropped.
template <class Load, class Scalar>
[[gnu::always_inline]] inline void widen_b_group(const Scalar* rows, Index count, Index dim, Index first, Index len,
                                                 double* widened) {
    for (Index r = 0; r < kBRows; ++r) {
        double* to = widened + r * len;
        if (r >= count) {
            std::fill(to, to + len, 0.0);
            continue;
        }
        for (Index i = 0; i < len; i += kLanes) {
            const Lanes values = Load::lanes(rows + r * dim + first + i);
            std::memcpy(to + i, &values, sizeof values);
        }
    }
}

/// The lines of `bytes` bytes from `first`, asked for one per step of the kernel's loop.
class LinesAhead {
public:
    LinesAhead() = default;
    LinesAhead(const void* first, Index bytes)
        : next_(static_cast<const char*>(first)),
          left_(bytes > 0 ? (bytes - 1) / Index{row_loops::kLineBytes} + 1 : 0) {}
    [[gnu::always_inline]] void step() {
        if (left_ > 0) {
            __builtin_prefetch(next_, 0, 3);
            next_ += row_loops::kLineBytes;
            --left_;
        }
    }

private:
    const char* next_ = nullptr;
    Index left_ = 0;
};

/// The lane sums of a group of kARows packed a rows against kBRows b rows (b_stride apart) over
/// `blocks` blocks of 8, written to `sums`: sums[(p * kBRows + q) * 8 ..] are pair (p, q)'s eight lanes,
/// each adding its products in turn, from +0.0 or, when `carried` is not null, from the lanes it holds
/// in the same layout (it may be sums itself). Each step also asks for one line of the b values read
/// next (`ahead`). The sums go in and out 64 bytes at a time: whole 1.5 KiB copies of them between the
/// k blocks of long rows compiled to `rep movsq`, a visible share of the batch on wide rows.
[[gnu::always_inline]] inline void lane_sums(const double* a, const double* b, Index b_stride, Index blocks,
                                             const double* carried, double* sums, LinesAhead& ahead) {
    Lanes acc[kARows][kBRows] = {};
    if (carried != nullptr) {
        for (Index p = 0; p < kARows; ++p) {
            for (Index q = 0; q < kBRows; ++q) {
                std::memcpy(&acc[p][q], carried + (p * kBRows + q) * kLanes, sizeof(Lanes));
            }
        }
    }
    for (Index j = 0; j < blocks; ++j) {
        ahead.step();
        Lanes bv[kBRows];
#pragma GCC unroll 8
        for (Index q = 0; q < kBRows; ++q) std::memcpy(&bv[q], b + q * b_stride + j * kLanes, sizeof(Lanes));
#pragma GCC unroll 8
        for (Index p = 0; p < kARows; ++p) {
            Lanes av;
            std::memcpy(&av, a + (j * kARows + p) * kLanes, sizeof av);
#pragma GCC unroll 8
            for (Index q = 0; q < kBRows; ++q) acc[p][q] += av * bv[q];
        }
    }
    for (Index p = 0; p < kARows; ++p) {
        for (Index q = 0; q < kBRows; ++q) std::memcpy(sums + (p * kBRows + q) * kLanes, &acc[p][q], sizeof(Lanes));
    }
}

/// sum_lanes of eight lane vectors at once: scores[j] = sum_lanes(v[j]), by the same additions with the
/// same operand first (adjacent lanes, then pairs of pairs, then the halves), each step adding two
/// shuffles of two vectors so that the sums gather into one vector as they go. Why: one sum_lanes is a
/// chain of shuffles and adds for a single score, a large share of the GEMM's time on short rows (few
/// products per score); here a score costs under three vector instructions. Every shuffle
/// interleaves or moves whole 128-bit pieces, so none needs an index vector in a register.
[[gnu::always_inline]] inline void sum_lanes_of_eight(const Lanes* v, double* scores) {
    // pairs[k]: v[2k] and v[2k+1] interleaved, lanes 0+1, 0+1, 2+3, 2+3, 4+5, 4+5, 6+7, 6+7
    Lanes pairs[4];
    for (Index k = 0; k < 4; ++k) {
        const Lanes& x = v[2 * k];
        const Lanes& y = v[2 * k + 1];
        pairs[k] = __builtin_shufflevector(x, y, 0, 8, 2, 10, 4, 12, 6, 14) +
                   __builtin_shufflevector(x, y, 1, 9, 3, 11, 5, 13, 7, 15);
    }
    // quads[k]: lanes 0-3 of v[4k], v[4k+1], then 4-7 of both, then the same of v[4k+2], v[4k+3]
    Lanes quads[2];
    for (Index k = 0; k < 2; ++k) {
        const Lanes& x = pairs[2 * k];
        const Lanes& y = pairs[2 * k + 1];
        quads[k] = __builtin_shufflevector(x, y, 0, 1, 4, 5, 8, 9, 12, 13) +
                   __builtin_shufflevector(x, y, 2, 3, 6, 7, 10, 11, 14, 15);
    }
    const Lanes eight = __builtin_shufflevector(quads[0], quads[1], 0, 1, 4, 5, 8, 9, 12, 13) +
                        __builtin_shufflevector(quads[0], quads[1], 2, 3, 6, 7, 10, 11, 14, 15);
    std::memcpy(scores, &eight, sizeof eight);
}

/// Scores of a register block's pairs, whose lane sums are acc (kARows x kBRows), into out (p rows
/// out_stride apart, q columns): the first `a_rows` x `b_rows` of them, the tails (a_tails and b_tails,
/// 8 per row, `tail` values each) added into lanes 0, 1, ... first. Not inlined: inlined after the
/// kernel's loop, its shuffles took registers the loop then lacked, and the loop spilled;
/// storing the sums once and reloading them here costs less.
[[gnu::noinline]] EMBED_TARGET_AVX512 inline void store_scores(const Lanes* acc, Index a_rows, Index b_rows,
                                                               const double* a_tails, const double* b_tails,
                                                               Index tail, double* out, Index out_stride) {
    constexpr Index kPairs = kARows * kBRows;
    double scores[kPairs];
    // A whole block without tails, the usual case, goes straight to out.
    if (tail == 0 && a_rows == kARows && b_rows == kBRows) {
        for (Index j = 0; j < kPairs; j += kLanes) {
            sum_lanes_of_eight(acc + j, scores);
            for (Index s = 0; s < kLanes; ++s) out[(j + s) / kBRows * out_stride + (j + s) % kBRows] = scores[s];
        }
        return;
    }
    if (tail == 0) {
        for (Index j = 0; j < kPairs; j += kLanes) sum_lanes_of_eight(acc + j, scores + j);
    } else {
        for (Index p = 0; p < kARows; ++p) {
            for (Index q = 0; q < kBRows; ++q) {
                double lane[kLanes];
                std::memcpy(lane, &acc[p * kBRows + q], sizeof lane);
                for (Index v = 0; v < tail; ++v) lane[v] += a_tails[p * kLanes + v] * b_tails[q * kLanes + v];
                scores[p * kBRows + q] = sum_lanes_pairwise(lane);
            }
        }
    }
    for (Index p = 0; p < a_rows; ++p) {
        for (Index q = 0; q < b_rows; ++q) out[p * out_stride + q] = scores[p * kBRows + q];
    }
}

/// Where the b values of one step of all_pairs lie: rows [first_row, first_row + count) of the group,
/// values [first_value, first_value + len) of each.
struct BSlice {
    Index first_row;  // m when there is no next slice
    Index count;
    Index first_value;
    Index len;
};

/// a is (n, dim) double, b is (m, dim) of Scalar, both row-major; out(i, t) at out[i * out_stride + t]
/// = dot_kernel(a row i, b row t widened). Load::lanes(p) returns the eight values from p as doubles.
/// Up to 64 a rows are packed at once. The b rows are taken kBGroupsPerChunk groups of 6 at a time and,
/// where d is long, kKBlockValues values at a time: for each such slice of a group (widened first unless
/// read in place) every group of 4 a rows carries its lane sums on from the slice before, kept in memory
/// between slices, while the lines of the next slice are asked for.
template <class Load, class Scalar>
[[gnu::always_inline]] inline void all_pairs(const double* a, Index n, const Scalar* b, Index m, Index dim,
                                             double* out, Index out_stride) {
    if (n <= 0 || m <= 0) return;
    constexpr Index kPairs = kARows * kBRows;
    constexpr Index kChunkRows = kBRows * kBGroupsPerChunk;
    const Index blocks = dim / kLanes;
    const Index whole = blocks * kLanes;
    const Index tail = dim % kLanes;
    const bool blocked = whole > kMaxUnblockedValues;
    const Index k_step = blocked ? kKBlockValues : std::max<Index>(whole, 1);
    const Index fit = kMaxPackedABytes / (std::max<Index>(whole, 1) * Index{sizeof(double)}) / kARows * kARows;
    const Index a_rows_per_pack = std::clamp<Index>(fit, kARows, kMaxPackedARows);
    const Index a_padded = std::min((n + kARows - 1) / kARows * kARows, a_rows_per_pack);
    PackBuffer<0> a_packed(a_padded * whole);
    PackBuffer<1> a_tails(a_padded * kLanes);
    PackBuffer<2> b_widened(kBRows * std::min(whole, k_step));
    PackBuffer<3> b_tails(kChunkRows * kLanes);
    PackBuffer<4> carried(a_padded / kARows * kBGroupsPerChunk * kPairs * kLanes);
    // Whole groups of double rows on cache lines are read where they lie (a row starts on a line when
    // the first does and d is a multiple of 8).
    bool b_in_place = false;
    if constexpr (std::is_same_v<Scalar, double>) {
        b_in_place = tail == 0 && reinterpret_cast<std::uintptr_t>(b) % row_loops::kLineBytes == 0;
    }
    // The slice after (group t, values from k0): the chunk's next group, else the chunk's first group
    // at the next k block, else the next chunk's first group at the start of its rows.
    const auto slice_after = [&](Index chunk, Index t, Index k0) -> BSlice {
        Index next_t = t + kBRows;
        Index next_k0 = k0;
        if (next_t >= std::min(m, chunk + kChunkRows)) {
            next_k0 = k0 + k_step;
            next_t = chunk;
            if (next_k0 >= whole) {
                next_k0 = 0;
                next_t = chunk + kChunkRows;
            }
        }
        if (next_t >= m) return {m, 0, 0, 0};
        return {next_t, std::min(kBRows, m - next_t), next_k0, std::min(k_step, whole - next_k0)};
    };
    for (Index i0 = 0; i0 < n; i0 += a_rows_per_pack) {
        const Index a_count = std::min(a_rows_per_pack, n - i0);
        const Index a_groups = (a_count + kARows - 1) / kARows;
        pack_a_groups(a + i0 * dim, a_count, dim, a_packed.data(), a_tails.data());
        for (Index chunk = 0; chunk < m; chunk += kChunkRows) {
            const Index chunk_end = std::min(m, chunk + kChunkRows);
            if (tail > 0) {
                for (Index t = chunk; t < chunk_end; t += kBRows) {
                    copy_tails(b + t * dim, std::min(kBRows, m - t), kBRows, dim,
                               b_tails.data() + (t - chunk) * kLanes);
                }
            }
            // At least one pass, for rows shorter than 8 values (no whole block, only tails).
            for (Index k0 = 0; k0 == 0 || k0 < whole; k0 += k_step) {
                const Index len = std::min(k_step, whole - k0);
                const bool first_block = k0 == 0;
                const bool last_block = k0 + k_step >= whole;
                for (Index t = chunk; t < chunk_end; t += kBRows) {
                    const Index b_count = std::min(kBRows, m - t);
                    const bool read_in_place = b_in_place && b_count == kBRows;
                    const double* b_rows = b_widened.data();
                    Index b_stride = len;
                    if constexpr (std::is_same_v<Scalar, double>) {
                        if (read_in_place) {
                            b_rows = b + t * dim + k0;
                            b_stride = dim;
                        }
                    }
                    if (!read_in_place) widen_b_group<Load>(b + t * dim, b_count, dim, k0, len, b_widened.data());
                    // Whole rows ask for the next group's lines in one run; k blocks for one row of the
                    // next slice per group of a rows.
                    const BSlice next = slice_after(chunk, t, k0);
                    LinesAhead group_ahead;
                    if (!blocked) {
                        group_ahead = LinesAhead(b + next.first_row * dim, next.count * dim * Index{sizeof(Scalar)});
                    }
                    const Index group_in_chunk = (t - chunk) / kBRows;
                    for (Index g = 0; g < a_groups; ++g) {
                        // A local copy, which the compiler keeps in registers through the loop: one chosen
                        // by reference stayed in memory, and then the whole GEMM ran slower in some
                        // processes than others, by where its stack happened to fall.
                        LinesAhead ahead = group_ahead;
                        if (blocked && next.count > 0) {
                            ahead = LinesAhead(b + (next.first_row + g % next.count) * dim + next.first_value,
                                               next.len * Index{sizeof(Scalar)});
                        }
                        // Lane sums carried to the next k block stay in `kept`; the last block's go to acc.
                        Lanes acc[kPairs];
                        double* kept = carried.data() + (g * kBGroupsPerChunk + group_in_chunk) * kPairs * kLanes;
                        lane_sums(a_packed.data() + (g * whole + k0) * kARows, b_rows, b_stride, len / kLanes,
                                  first_block ? nullptr : kept, last_block ? reinterpret_cast<double*>(acc) : kept,
                                  ahead);
                        group_ahead = ahead;
                        if (!last_block) continue;
                        const Index first = i0 + g * kARows;
                        store_scores(acc, std::min(kARows, n - first), b_count, a_tails.data() + g * kARows * kLanes,
                                     b_tails.data() + (t - chunk) * kLanes, tail, out + first * out_stride + t,
                                     out_stride);
                    }
                }
            }
        }
    }
}

}  // namespace embed::detail::packed_gemm
