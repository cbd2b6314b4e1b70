// embed_edit_model SOURCE DESTINATION N: appends N tokens ("<|bench_token_i|>", user-defined, rows by the mean)
// to the model SOURCE with edit_model, writing DESTINATION, and prints the rows before and after and the time.
// tools/bench/edit_model.py times it beside cp of the same file and takes its peak memory with
// /usr/bin/time -v (tools/bench/README.md, Editing a model file).

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>

#include <embed/edit_model.hpp>

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: embed_edit_model SOURCE DESTINATION N\n");
        return 2;
    }
    try {
        embed::ModelEdits edits;
        const long count = std::stol(argv[3]);
        for (long i = 0; i < count; ++i) edits.add_tokens.push_back("<|bench_token_" + std::to_string(i) + "|>");
        const auto start = std::chrono::steady_clock::now();
        const embed::EditRecord record = embed::edit_model(argv[1], argv[2], edits);
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("%lld rows -> %lld rows in %.3f s\n", static_cast<long long>(record.rows_before),
                    static_cast<long long>(record.rows_after), took);
        return 0;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "embed_edit_model: %s\n", error.what());
        return 1;
    }
}
