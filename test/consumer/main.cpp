// Links against an installed embed and checks a few results SPECIFICATION.md fixes;
// exits nonzero when any of them is wrong.
#include <cstdio>
#include <vector>

#include <embed/embed.hpp>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "consumer check failed: %s\n", what);
        ++failures;
    }
}

}  // namespace

int main() {
    const embed::Table table = embed::make_table(embed::VOCAB, embed::DIM, embed::SEED);
    // CPython: random.Random(20260917).random() - 0.5
    check(table(0, 0) == 0.11666082688204615, "make_table(512, 64, SEED)(0, 0)");
    check(table(511, 63) == -0.46931364710400825, "make_table(512, 64, SEED)(511, 63)");
    check(embed::param_count(512, 64) == 32768, "param_count(512, 64)");

    const std::vector<embed::Index> ids{137, 137};
    const embed::Table rows = embed::lookup(table, ids);
    check(rows.rows() == 2 && rows.row(0) == table.row(137), "lookup of a repeated id");
    return failures == 0 ? 0 : 1;
}
