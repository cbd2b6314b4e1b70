// embed_load_table FILE [TENSOR]: loads a table once and prints its shape and how fast the file was read
// (tools/bench/README.md says how to run it; peak memory comes from /usr/bin/time -v around it).

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>

#include <embed/io.hpp>

int main(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: embed_load_table FILE [TENSOR]\n");
        return 2;
    }
    try {
        const auto start = std::chrono::steady_clock::now();
        const embed::Table table = embed::load_table(argv[1], argc == 3 ? argv[2] : "");
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        const auto bytes = static_cast<double>(std::filesystem::file_size(argv[1]));
        std::printf("%lld x %lld in %.3f s: %.2f GB/s of file, %.2f GB/s of doubles written\n",
                    static_cast<long long>(table.rows()), static_cast<long long>(table.cols()), took.count(),
                    bytes / took.count() / 1e9, static_cast<double>(table.size()) * 8 / took.count() / 1e9);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "embed_load_table: %s\n", error.what());
        return 1;
    }
    return 0;
}
