#include "embed/edit.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "checks.hpp"
#include "edit_rows.hpp"
#include "embed/python_random.hpp"
#include "floating_point/narrow_values.hpp"
#include "stored_tables.hpp"
#include "floating_point/float_mode.hpp"
#include "threads/parallel.hpp"

namespace embed {
namespace {

/// transformers' factor on the covariance of the old rows (_init_added_embeddings_weights_with_mean).
constexpr double covariance_factor = 1e-9;

/// One value of CPython's random.normalvariate(0.0, 1.0): Kinderman and Monahan's ratio of uniforms, in
/// CPython's order of operations (NV_MAGICCONST = 4 * exp(-0.5) / sqrt(2.0)); mu + z * sigma is z itself.
double normalvariate(PythonRandom& random) {
    static const double magic = 4 * std::exp(-0.5) / std::sqrt(2.0);
    while (true) {
        const double u1 = random.random();
        const double u2 = 1.0 - random.random();
        const double z = magic * (u1 - 0.5) / u2;
        const double zz = z * z / 4.0;
        if (zz <= -std::log(u2)) return z;
    }
}

/// The source rows' mean (d): each column summed over rows in ascending order, in double, divided by
/// their count. Split between the cores by columns, so each column's sum is the same at any thread count.
template <class Scalar>
RowVector mean_of(BasicTableView<Scalar> table, std::span<const Index> rows) {
    const Index d = table.cols();
    RowVector mean = RowVector::Zero(d);
    const auto count = static_cast<double>(rows.size());
    detail::parallel_for(d, static_cast<Index>(rows.size()), [&](Index first, Index last) {
        for (const Index r : rows) {
            const Scalar* row = table.data() + r * d;
            for (Index c = first; c < last; ++c) mean[c] += detail::widen(row[c]);
        }
        for (Index c = first; c < last; ++c) mean[c] /= count;
    });
    return mean;
}

/// 1e-9 times the source rows' covariance about mean, (d, d), lower triangle only: entry (i, j), j <= i,
/// sums (x_i - m_i)(x_j - m_j) over the rows in ascending order, then divides by their count. Split by
/// rows of the result, each thread centring every source row itself.
template <class Scalar>
Table scaled_covariance(BasicTableView<Scalar> table, std::span<const Index> rows, const RowVector& mean) {
    const Index d = table.cols();
    Table covariance = Table::Zero(d, d);
    const auto count = static_cast<double>(rows.size());
    detail::parallel_for(d, static_cast<Index>(rows.size()) * d / 2 + 1, [&](Index first, Index last) {
        std::vector<double> centred(static_cast<std::size_t>(last));
        for (const Index r : rows) {
            const Scalar* row = table.data() + r * d;
            for (Index c = 0; c < last; ++c) centred[static_cast<std::size_t>(c)] = detail::widen(row[c]) - mean[c];
            for (Index i = first; i < last; ++i) {
                const double xi = centred[static_cast<std::size_t>(i)];
                double* out = covariance.data() + i * d;
                for (Index j = 0; j <= i; ++j) out[j] += xi * centred[static_cast<std::size_t>(j)];
            }
        }
        for (Index i = first; i < last; ++i) {
            for (Index j = 0; j <= i; ++j) covariance(i, j) = covariance_factor * (covariance(i, j) / count);
        }
    });
    return covariance;
}

/// The lower Cholesky factor L of s (lower triangle read), s = L L^T, column by column (Crout), each sum
/// over k ascending; nullopt when a pivot is not a positive finite number (s not positive definite, as
/// torch.linalg.cholesky_ex reports it). The rows below each pivot are split between the cores.
std::optional<Table> cholesky(const Table& s) {
    const Index d = s.rows();
    Table lower = Table::Zero(d, d);
    for (Index j = 0; j < d; ++j) {
        double pivot = s(j, j);
        for (Index k = 0; k < j; ++k) pivot -= lower(j, k) * lower(j, k);
        if (!(pivot > 0.0) || !std::isfinite(pivot)) return std::nullopt;
        const double root = std::sqrt(pivot);
        lower(j, j) = root;
        detail::parallel_for(d - j - 1, j + 1, [&](Index first, Index last) {
            for (Index i = j + 1 + first; i < j + 1 + last; ++i) {
                double value = s(i, j);
                for (Index k = 0; k < j; ++k) value -= lower(i, k) * lower(j, k);
                lower(i, j) = value / root;
            }
        });
    }
    return lower;
}

/// count new rows (count, d) in double by init from the source rows of table.
template <class Scalar>
Table new_rows(BasicTableView<Scalar> table, std::span<const Index> rows, Index count, RowInit init,
               std::uint64_t seed) {
    const Index d = table.cols();
    if (init == RowInit::zeros) return Table::Zero(count, d);
    const RowVector mean = mean_of(table, rows);
    Table out = mean.replicate(count, 1);
    if (init == RowInit::mean) return out;
    const std::optional<Table> lower = cholesky(scaled_covariance(table, rows, mean));
    if (!lower) return out;
    PythonRandom random(seed);
    std::vector<double> z(static_cast<std::size_t>(d));
    for (Index r = 0; r < count; ++r) {
        for (double& value : z) value = normalvariate(random);
        for (Index c = 0; c < d; ++c) {
            double sum = 0.0;
            for (Index k = 0; k <= c; ++k) sum += (*lower)(c, k) * z[static_cast<std::size_t>(k)];
            out(r, c) = mean[c] + sum;
        }
    }
    return out;
}

/// Throws invalid_argument when init needs source rows and there are none.
void require_source(std::size_t source_rows, RowInit init, const char* what) {
    if (source_rows == 0 && init != RowInit::zeros) {
        throw std::invalid_argument(std::string(what) + " by \"" + std::string(row_init_name(init)) +
                                    "\" needs at least one source row to take the mean of, and there is none; "
                                    "use \"zeros\"");
    }
}

/// rows (count, d) in double rounded once into out's rows at, at + 1, ... (ascending positions).
template <class Scalar>
void store_rows(const Table& rows, std::span<const Index> positions, BasicTable<Scalar>& out) {
    for (std::size_t i = 0; i < positions.size(); ++i) {
        const auto r = static_cast<Index>(i);
        for (Index c = 0; c < out.cols(); ++c) out(positions[i], c) = detail::narrow_to<Scalar>(rows(r, c));
    }
}

std::vector<Index> range_of(Index begin, Index end) {
    std::vector<Index> ids;
    ids.reserve(static_cast<std::size_t>(std::max<Index>(end - begin, 0)));
    for (Index i = begin; i < end; ++i) ids.push_back(i);
    return ids;
}

}  // namespace

std::string_view row_init_name(RowInit init) {
    switch (init) {
        case RowInit::mean: return "mean";
        case RowInit::sampled: return "sampled";
        case RowInit::zeros: return "zeros";
    }
    throw std::invalid_argument("row initialisation " + std::to_string(static_cast<int>(init)) +
                                " is not one of mean, sampled, zeros");
}

RowInit parse_row_init(std::string_view name) {
    for (const RowInit init : {RowInit::mean, RowInit::sampled, RowInit::zeros}) {
        if (name == row_init_name(init)) return init;
    }
    throw std::invalid_argument("row initialisation \"" + std::string(name) +
                                "\" is not one of \"mean\", \"sampled\", \"zeros\"");
}

namespace detail {

template <class Scalar>
BasicTable<Scalar> appended_rows(BasicTableView<Scalar> table, Index count, RowInit init, std::uint64_t seed) {
    require_non_negative(count, "rows to append");
    row_init_name(init);
    BasicTable<Scalar> out(count, table.cols());
    if (count == 0) return out;
    require_source(static_cast<std::size_t>(table.rows()), init, "growing a table");
    const DefaultFloatMode float_mode;
    const Table added = new_rows<Scalar>(table, range_of(0, table.rows()), count, init, seed);
    store_rows(added, range_of(0, count), out);
    return out;
}

template <class Scalar>
void reinitialise_rows_in_place(BasicTable<Scalar>& table, Ids ids, RowInit init, std::uint64_t seed) {
    row_init_name(init);
    const Index rows = table.rows();
    for (const Index id : ids) require_token(id, rows);
    std::vector<Index> targets(ids.begin(), ids.end());
    std::ranges::sort(targets);
    targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
    if (targets.empty()) return;
    std::vector<Index> source;
    source.reserve(static_cast<std::size_t>(rows) - targets.size());
    auto next_target = targets.begin();
    for (Index r = 0; r < rows; ++r) {
        if (next_target != targets.end() && *next_target == r) {
            ++next_target;
        } else {
            source.push_back(r);
        }
    }
    require_source(source.size(), init, "re-initialising rows");
    const DefaultFloatMode float_mode;
    // Every fresh row is computed from the source rows before any is stored: targets are not among them.
    const Table fresh = new_rows<Scalar>(view_of(table), source, static_cast<Index>(targets.size()), init, seed);
    store_rows(fresh, targets, table);
}

template BasicTable<double> appended_rows<double>(BasicTableView<double>, Index, RowInit, std::uint64_t);
template BasicTable<float> appended_rows<float>(BasicTableView<float>, Index, RowInit, std::uint64_t);
template BasicTable<Eigen::bfloat16> appended_rows<Eigen::bfloat16>(BasicTableView<Eigen::bfloat16>, Index, RowInit,
                                                                    std::uint64_t);
template void reinitialise_rows_in_place<double>(BasicTable<double>&, Ids, RowInit, std::uint64_t);
template void reinitialise_rows_in_place<float>(BasicTable<float>&, Ids, RowInit, std::uint64_t);
template void reinitialise_rows_in_place<Eigen::bfloat16>(BasicTable<Eigen::bfloat16>&, Ids, RowInit, std::uint64_t);

}  // namespace detail

template <TableOrView T>
BasicTable<typename T::Scalar> resize_rows(const T& table, Index rows, RowInit init, std::uint64_t seed) {
    using Scalar = typename T::Scalar;
    detail::require_non_negative(rows, "rows");
    row_init_name(init);
    const Index old_rows = table.rows();
    if (rows <= old_rows) return BasicTable<Scalar>(table.topRows(rows));
    require_source(static_cast<std::size_t>(old_rows), init, "growing a table");
    BasicTable<Scalar> out(rows, table.cols());
    out.bottomRows(rows - old_rows) = detail::appended_rows<Scalar>(view_of(table), rows - old_rows, init, seed);
    out.topRows(old_rows) = table;
    return out;
}

template <TableOrView T>
BasicTable<typename T::Scalar> pad_to_multiple_of(const T& table, Index k, RowInit init, std::uint64_t seed) {
    if (k <= 0) throw std::invalid_argument("k must be >= 1 to pad to a multiple of it, got " + std::to_string(k));
    const Index rows = table.rows();
    const Index blocks = detail::ceil_div(rows, k);
    return resize_rows(table, detail::checked_mul(blocks, k, "rows padded to a multiple of k"), init, seed);
}

template <TableOrView T>
BasicTable<typename T::Scalar> reinitialise_rows(const T& table, Ids ids, RowInit init, std::uint64_t seed) {
    using Scalar = typename T::Scalar;
    row_init_name(init);
    for (const Index id : ids) detail::require_token(id, table.rows());
    BasicTable<Scalar> out(table);
    detail::reinitialise_rows_in_place(out, ids, init, seed);
    return out;
}

#define EMBED_INSTANTIATE_EDIT(T)                                                                      \
    template BasicTable<T::Scalar> resize_rows<T>(const T&, Index, RowInit, std::uint64_t);           \
    template BasicTable<T::Scalar> pad_to_multiple_of<T>(const T&, Index, RowInit, std::uint64_t);    \
    template BasicTable<T::Scalar> reinitialise_rows<T>(const T&, Ids, RowInit, std::uint64_t);
EMBED_FOR_EACH_STORED_TABLE(EMBED_INSTANTIATE_EDIT)
#undef EMBED_INSTANTIATE_EDIT

}  // namespace embed
