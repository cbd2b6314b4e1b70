#include "kernels/block_products.hpp"

#include <cstring>

#include "kernels/base.hpp"
#include "kernels/multiversion.hpp"

// Lanes are 64-byte vectors used inside one function, so the calling convention GCC warns about never
// reaches another file.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace embed::detail {
namespace {

// add_block_products, compiled for every instruction set; eight columns at a time in Lanes, the last
// dim % 8 columns one at a time, in the same order of additions.
EMBED_MULTIVERSION void add_block_products_compiled(const double* yt, Index count, const double* block, Index dim,
                                                    double* zt) {
    Index c = 0;
    for (; c + kLanes <= dim; c += kLanes) {
        Lanes acc[kProductVectors];
        for (Index j = 0; j < kProductVectors; ++j) std::memcpy(&acc[j], zt + j * dim + c, sizeof(Lanes));
        for (Index r = 0; r < count; ++r) {
            Lanes x;
            std::memcpy(&x, block + r * dim + c, sizeof x);
            for (Index j = 0; j < kProductVectors; ++j) acc[j] += yt[j * count + r] * x;
        }
        for (Index j = 0; j < kProductVectors; ++j) std::memcpy(zt + j * dim + c, &acc[j], sizeof(Lanes));
    }
    for (; c < dim; ++c) {
        for (Index j = 0; j < kProductVectors; ++j) {
            double acc = zt[j * dim + c];
            for (Index r = 0; r < count; ++r) acc += yt[j * count + r] * block[r * dim + c];
            zt[j * dim + c] = acc;
        }
    }
}

}  // namespace

void add_block_products(const double* yt, Index count, const double* block, Index dim, double* zt) {
    add_block_products_compiled(yt, count, block, dim, zt);
}

}  // namespace embed::detail
