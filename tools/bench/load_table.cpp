// embed_load_table FILE [TENSOR]: loads a table once and prints its shape and how fast the file was read.
// embed_load_table --f32 --runs=N FILE...: loads each file's table as float32 (load_table_f32), the files
// in turns, N rounds, and prints each file's median side by side: the same table stored in different
// formats compares in one run, on the same machine state (tools/bench/README.md says how to run both;
// peak memory comes from /usr/bin/time -v around the first form).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include <embed/io.hpp>

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int load_once(const char* file, const char* tensor) {
    const auto start = std::chrono::steady_clock::now();
    const embed::Table table = embed::load_table(file, tensor);
    const double took = seconds_since(start);
    const auto bytes = static_cast<double>(std::filesystem::file_size(file));
    std::printf("%lld x %lld in %.3f s: %.2f GB/s of file, %.2f GB/s of doubles written\n",
                static_cast<long long>(table.rows()), static_cast<long long>(table.cols()), took, bytes / took / 1e9,
                static_cast<double>(table.size()) * 8 / took / 1e9);
    return 0;
}

/// Each file loaded as float32 runs times, in turns (file 1, file 2, ..., then again), so a drift in the
/// machine's speed reaches every file alike; prints each file's median.
int compare_f32(const std::vector<std::string>& files, int runs) {
    std::vector<std::vector<double>> times(files.size());
    for (int round = 0; round < runs; ++round) {
        for (std::size_t f = 0; f < files.size(); ++f) {
            const auto start = std::chrono::steady_clock::now();
            const embed::TableF32 table = embed::load_table_f32(files[f]);
            times[f].push_back(seconds_since(start));
            if (round == 0) {
                std::printf("%s: %lld x %lld\n", files[f].c_str(), static_cast<long long>(table.rows()),
                            static_cast<long long>(table.cols()));
            }
        }
    }
    std::printf("median of %d loads as float32:\n", runs);
    for (std::size_t f = 0; f < files.size(); ++f) {
        std::vector<double>& t = times[f];
        std::ranges::sort(t);
        std::printf("  %8.3f s  (min %.3f, max %.3f)  %s\n", t[t.size() / 2], t.front(), t.back(), files[f].c_str());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    const bool compare = !args.empty() && args[0] == "--f32";
    const bool runs_given = args.size() >= 2 && args[1].starts_with("--runs=");
    if ((compare && (!runs_given || args.size() < 3)) || (!compare && (args.empty() || args.size() > 2))) {
        std::fprintf(stderr, "usage: embed_load_table FILE [TENSOR]\n"
                             "       embed_load_table --f32 --runs=N FILE...\n");
        return 2;
    }
    try {
        if (!compare) return load_once(argv[1], argc == 3 ? argv[2] : "");
        const int runs = std::max(1, std::stoi(args[1].substr(7)));
        return compare_f32(std::vector<std::string>(args.begin() + 2, args.end()), runs);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "embed_load_table: %s\n", error.what());
        return 1;
    }
}
