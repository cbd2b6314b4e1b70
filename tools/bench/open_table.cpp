// embed_open_table FILE [TENSOR]: opens a table with open_table (a quantised GGUF tensor stays in its
// blocks), scores it once each way (logits of one hidden vector, nearest_by_dot with k = 5, lookup of 1,000
// ids) and prints the table's bytes and each step's time. /usr/bin/time -v around it gives the peak memory:
// for a quantised table, its blocks plus O(V + d) (tools/bench/README.md).

#include <chrono>
#include <cstdio>
#include <exception>
#include <random>
#include <variant>
#include <vector>

#include <embed/embed.hpp>

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The bytes the opened table holds its values in.
double held_bytes(const embed::OpenedTable& opened) {
    return std::visit(
        [](const auto& table) -> double {
            if constexpr (std::is_same_v<std::decay_t<decltype(table)>, embed::QuantisedTable>) {
                return static_cast<double>(table.bytes());
            } else {
                return static_cast<double>(table.size()) * sizeof(typename std::decay_t<decltype(table)>::Scalar);
            }
        },
        opened.table);
}

int open_and_score(const char* file, const char* tensor) {
    auto start = std::chrono::steady_clock::now();
    const embed::OpenedTable opened = embed::open_table(file, tensor);
    std::printf("opened %s as %s in %.3f s: %.0f bytes held\n", file,
                std::string(embed::element_type_name(opened.type)).c_str(), seconds_since(start), held_bytes(opened));
    return std::visit(
        [](const auto& table) {
            const embed::Index dim = table.cols();
            embed::Vector hidden(dim);
            std::mt19937_64 rng(7);
            std::uniform_real_distribution<double> u(-0.5, 0.5);
            for (embed::Index c = 0; c < dim; ++c) hidden[c] = u(rng);
            std::vector<embed::Index> ids(1000);
            std::uniform_int_distribution<embed::Index> pick(0, table.rows() - 1);
            for (embed::Index& id : ids) id = pick(rng);

            auto step = std::chrono::steady_clock::now();
            const embed::Vector scores = embed::logits(table, hidden);
            std::printf("logits: %.3f s (sum %.6g)\n", seconds_since(step), scores.sum());
            step = std::chrono::steady_clock::now();
            const std::vector<embed::Index> nearest = embed::nearest_by_dot(table, ids.front(), 5);
            std::printf("nearest_by_dot k=5: %.3f s (first %lld)\n", seconds_since(step),
                        static_cast<long long>(nearest.front()));
            step = std::chrono::steady_clock::now();
            const auto rows = embed::lookup(table, ids);
            std::printf("lookup of %zu ids: %.3f s (%lld x %lld)\n", ids.size(), seconds_since(step),
                        static_cast<long long>(rows.rows()), static_cast<long long>(rows.cols()));
            return 0;
        },
        opened.table);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: embed_open_table FILE [TENSOR]\n");
        return 2;
    }
    try {
        return open_and_score(argv[1], argc == 3 ? argv[2] : "");
    } catch (const std::exception& error) {
        std::fprintf(stderr, "embed_open_table: %s\n", error.what());
        return 1;
    }
}
