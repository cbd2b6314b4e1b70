// Weight tying reads the caller's table in place. This binary is built with
// EIGEN_RUNTIME_NO_MALLOC in every translation unit (the library sources are
// compiled into it), so Eigen aborts on any heap allocation while the guard
// is off; the death test shows the guard is live, so the checks are not vacuous.
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <embed/logits.hpp>
#include <embed/lookup.hpp>
#include <embed/precision.hpp>
#include <embed/scaling.hpp>
#include <embed/similarity.hpp>
#include <embed/table.hpp>
#include <embed/tied_embedding.hpp>

#include "all_close.hpp"

namespace {

using embed::Index;
using embed::Table;
using embed::Vector;
using embed_test::AllClose;

// Turns Eigen's allocation guard on for one scope and off again, even on a failed assertion.
class NoEigenMalloc {
public:
    NoEigenMalloc() { Eigen::internal::set_is_malloc_allowed(false); }
    ~NoEigenMalloc() { Eigen::internal::set_is_malloc_allowed(true); }
    NoEigenMalloc(const NoEigenMalloc&) = delete;
    NoEigenMalloc& operator=(const NoEigenMalloc&) = delete;
};

// table is (V, d), hidden is (d), returns (V) by the definition's double loop.
Vector logits_by_loop(const Table& table, const Vector& hidden) {
    Vector out = Vector::Zero(table.rows());
    for (Index t = 0; t < table.rows(); ++t) {
        for (Index c = 0; c < table.cols(); ++c) out[t] += table(t, c) * hidden[c];
    }
    return out;
}

TEST(NoMallocDeathTest, GuardAbortsAnEigenAllocation) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // the library may have started worker threads
    const Table table = embed::make_table(8, 4, 1);
    EXPECT_DEATH(
        {
            Eigen::internal::set_is_malloc_allowed(false);
            const Table copy = table;
            (void)copy;
        },
        "heap allocation is forbidden");
}

TEST(NoMalloc, LogitsIntoAllocatesNoMatrix) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    const Vector hidden = table.row(137).transpose();
    Vector out(embed::VOCAB);
    {
        NoEigenMalloc guard;
        embed::logits_into(table, hidden, out);
    }
    EXPECT_TRUE(AllClose(out, logits_by_loop(table, hidden), 1e-13));
}

TEST(NoMalloc, LookupIntoAllocatesNoMatrix) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    const std::vector<Index> ids{137, 4, 511, 0};
    Table out(4, embed::DIM);
    {
        NoEigenMalloc guard;
        embed::lookup_into(table, ids, out);
    }
    for (Index i = 0; i < 4; ++i) EXPECT_TRUE(AllClose(out.row(i), table.row(ids[static_cast<std::size_t>(i)]), 0.0));
}

TEST(NoMalloc, TableRowsBindToTheVectorFunctionsWithoutACopy) {
    const Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    double dot = 0.0;
    double norm = 0.0;
    double cosine = 0.0;
    double rms = 0.0;
    {
        NoEigenMalloc guard;
        dot = embed::dot(table.row(1), table.row(2));
        norm = embed::norm(table.row(1));
        cosine = embed::cosine(table.row(1), table.row(2));
        rms = embed::rms(table.row(1));
    }
    double want_dot = 0.0;
    double want_square = 0.0;
    double want_square_2 = 0.0;
    for (Index c = 0; c < table.cols(); ++c) {
        want_dot += table(1, c) * table(2, c);
        want_square += table(1, c) * table(1, c);
        want_square_2 += table(2, c) * table(2, c);
    }
    EXPECT_NEAR(dot, want_dot, 1e-13);
    EXPECT_NEAR(norm, std::sqrt(want_square), 1e-13);
    EXPECT_NEAR(cosine, want_dot / std::sqrt(want_square * want_square_2), 1e-13);
    EXPECT_NEAR(rms, std::sqrt(want_square / 64.0), 1e-13);
}

// A tied float32 or bfloat16 embedding scores against its one table in place: no widened copy, no
// buffer, and the same bits as the double logits of the widened table.
template <class Scalar>
class NoMallocNarrow : public testing::Test {};
using NarrowTypes = testing::Types<float, Eigen::bfloat16>;
TYPED_TEST_SUITE(NoMallocNarrow, NarrowTypes);

TYPED_TEST(NoMallocNarrow, TiedLogitsAndLookupIntoAllocateNothing) {
    using Scalar = TypeParam;
    const Table wide = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    embed::BasicTable<Scalar> narrow;
    if constexpr (std::is_same_v<Scalar, float>) {
        narrow = embed::to_f32(wide);
    } else {
        narrow = embed::to_bf16(wide);
    }
    const embed::BasicTiedEmbedding<Scalar> tied(narrow);
    const Vector hidden = wide.row(137).transpose();
    Vector out(embed::VOCAB);
    const std::vector<Index> ids{137, 4, 511, 0};
    embed::BasicTable<Scalar> rows(4, embed::DIM);
    {
        NoEigenMalloc guard;
        embed::logits_into(tied.output_weights(), hidden, out);
        embed::lookup_into(tied.input_weights(), ids, rows);
    }
    const Vector want = embed::logits(embed::to_double(tied.output_weights()), hidden);
    EXPECT_TRUE((out.array() == want.array()).all());
    for (Index i = 0; i < 4; ++i) {
        EXPECT_EQ(std::memcmp(rows.row(i).data(), narrow.row(ids[static_cast<std::size_t>(i)]).data(),
                              embed::DIM * sizeof(Scalar)),
                  0);
    }
}

}  // namespace
