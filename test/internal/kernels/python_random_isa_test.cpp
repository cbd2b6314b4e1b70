// PythonRandom's vectorised twist and tempering, compiled for one instruction
// set only (this file is linked three times with lib/python_random.cpp built
// for the baseline, AVX2 and AVX-512; see CMakeLists.txt), give CPython's
// stream. A test of the library itself only ever runs this machine's best
// clone of them; a CPU without AVX-512 runs another.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <embed/python_random.hpp>

#include "cpython.hpp"

namespace {

// Skips on a machine that cannot run the instruction set this binary was built for
// (EMBED_TEST_ISA; the baseline build has none to check).
class PythonRandomOnOneInstructionSet : public testing::TestWithParam<std::uint64_t> {
protected:
    void SetUp() override {
#if defined(EMBED_TEST_ISA)
        if (!__builtin_cpu_supports(EMBED_TEST_ISA)) GTEST_SKIP() << "this CPU lacks " << EMBED_TEST_ISA;
#endif
        EMBED_REQUIRE_PYTHON();
    }
    static std::string cpython(const std::string& body) {
        return embed_test::run_python("import random\nr = random.Random(" + std::to_string(GetParam()) + ")\n" +
                                      body);
    }
};

// Ten whole states and a part: fill_random pairs whole states at a time (emit_block), then one value at a time.
constexpr int kValues = 10 * 312 + 7;

TEST_P(PythonRandomOnOneInstructionSet, FillWithOffsetIsCPythonsRandomMinusAHalf) {
    const std::vector<double> want = embed_test::parse_hex_doubles(
        cpython("print(\" \".join((r.random() - 0.5).hex() for _ in range(" + std::to_string(kValues) + ")))"));
    ASSERT_EQ(want.size(), static_cast<std::size_t>(kValues));
    embed::PythonRandom rng(GetParam());
    std::vector<double> got(want.size());
    rng.fill_random(got, -0.5);
    for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "value " << i;
}

// Every word of three twists, one at a time, as getrandbits(32) gives them.
TEST_P(PythonRandomOnOneInstructionSet, WordsAreCPythonsGetrandbits32) {
    constexpr int kWords = 3 * 624;
    const std::vector<unsigned long long> want = embed_test::parse_integers(
        cpython("print(\" \".join(str(r.getrandbits(32)) for _ in range(" + std::to_string(kWords) + ")))"));
    ASSERT_EQ(want.size(), static_cast<std::size_t>(kWords));
    embed::PythonRandom rng(GetParam());
    for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(rng.next_u32(), want[i]) << "word " << i;
}

INSTANTIATE_TEST_SUITE_P(Seeds, PythonRandomOnOneInstructionSet, testing::Values(0ULL, 42ULL, 20260917ULL));

}  // namespace
