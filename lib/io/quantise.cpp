// ggml's reference quantisers, from the published algorithm in ggml-quants.c (quantize_row_q4_0_ref ...
// quantize_row_q6_K_ref and their helpers make_qx_quants, make_q3_quants, make_qkx2_quants), float32
// arithmetic in ggml's order; the block layouts are ggml-common.h's.

#include "io/quantise.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "embed/precision.hpp"
#include "floating_point/half.hpp"

namespace embed::io {
namespace {

constexpr int qk = 32;     // values in a block of the simple types
constexpr int qk_k = 256;  // values in a K type's super-block
constexpr float group_max_eps = 1e-15f;

/// x truncated to a 32-bit integer as x86-64's cvttss2si does (INT32_MIN for NaN or out of range).
std::int32_t truncate_to_int32(float x) {
    if (!(x > -2147483904.0f && x < 2147483648.0f)) return std::numeric_limits<std::int32_t>::min();
    return static_cast<std::int32_t>(x);
}

/// C's (int8_t)x as llama.cpp built for x86-64 computes it: the 32-bit truncation's low 8 bits.
int to_int8(float x) { return static_cast<std::int8_t>(static_cast<std::uint8_t>(truncate_to_int32(x) & 0xFF)); }

/// C's (uint8_t)x likewise.
int to_uint8(float x) { return static_cast<std::uint8_t>(truncate_to_int32(x) & 0xFF); }

/// ggml's nearest_int: x + 1.5 * 2^23 rounds x to an integer in float32 (ties to even), read back from the
/// significand's bits. Defined for |x| <= 4194303; outside that it is bit arithmetic all the same.
int nearest_int(float x) {
    const float shifted = x + 12582912.0f;
    const auto bits = std::bit_cast<std::int32_t>(shifted);
    return (bits & 0x007FFFFF) - 0x00400000;
}

float half_float(std::uint16_t bits) { return detail::half_to_float(bits); }

void put_half(std::byte* out, std::uint16_t bits) {
    out[0] = static_cast<std::byte>(bits & 0xFF);
    out[1] = static_cast<std::byte>(bits >> 8);
}

std::uint16_t to_half(float x) { return half_bits(static_cast<double>(x)); }

std::uint8_t* bytes(std::byte* out) { return reinterpret_cast<std::uint8_t*>(out); }

/// Two quants in one byte: the 4-bit types store xi0 | xi1 << 4 as it is, the 5-bit ones their low nibbles.
std::uint8_t pack_pair(int xi0, int xi1, bool five_bit) {
    if (five_bit) return static_cast<std::uint8_t>((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
    return static_cast<std::uint8_t>((xi0 | (xi1 << 4)) & 0xFF);
}

/// The value of largest magnitude in x (n), the first one on a tie (ggml's "max" of q4_0 and q5_0, and of
/// make_qx_quants' and make_q3_quants' groups); 0 when every value is 0 or NaN.
float signed_absolute_max(const float* x, int n) {
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

/// Q4_0 and Q5_0: d = max / -(2^(bits-1)), quants x / d + 2^(bits-1) rounded (+0.5, truncated), capped.
void quantise_symmetric(const float* x, std::byte* out, bool five_bit) {
    const float max = signed_absolute_max(x, qk);
    const float d = max / (five_bit ? -16.0f : -8.0f);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    put_half(out, to_half(d));
    std::uint8_t* qs = bytes(out) + (five_bit ? 6 : 2);
    std::uint32_t qh = 0;
    for (int j = 0; j < qk / 2; ++j) {
        const float x0 = x[j] * id;
        const float x1 = x[qk / 2 + j] * id;
        const float offset = five_bit ? 16.5f : 8.5f;
        const int top = five_bit ? 31 : 15;
        const int xi0 = std::min(top, to_int8(x0 + offset)) & 0xFF;
        const int xi1 = std::min(top, to_int8(x1 + offset)) & 0xFF;
        qs[j] = pack_pair(xi0, xi1, five_bit);
        qh |= static_cast<std::uint32_t>((xi0 & 0x10) >> 4) << j;
        qh |= static_cast<std::uint32_t>((xi1 & 0x10) >> 4) << (j + qk / 2);
    }
    if (five_bit) {
        for (int b = 0; b < 4; ++b) bytes(out)[2 + b] = static_cast<std::uint8_t>(qh >> (8 * b));
    }
}

/// Q4_1 and Q5_1: d = (max - min) / (2^bits - 1), m = min, quants (x - min) / d rounded.
void quantise_with_min(const float* x, std::byte* out, bool five_bit) {
    float min = std::numeric_limits<float>::max();
    float max = -std::numeric_limits<float>::max();
    for (int j = 0; j < qk; ++j) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    const float d = (max - min) / (five_bit ? 31.0f : 15.0f);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    put_half(out, to_half(d));
    put_half(out + 2, to_half(min));
    std::uint8_t* qs = bytes(out) + (five_bit ? 8 : 4);
    std::uint32_t qh = 0;
    for (int j = 0; j < qk / 2; ++j) {
        const float x0 = (x[j] - min) * id;
        const float x1 = (x[qk / 2 + j] - min) * id;
        // Q4_1 casts to int8_t and caps at 15; Q5_1 casts to uint8_t uncapped.
        const int xi0 = five_bit ? to_uint8(x0 + 0.5f) : std::min(15, to_int8(x0 + 0.5f)) & 0xFF;
        const int xi1 = five_bit ? to_uint8(x1 + 0.5f) : std::min(15, to_int8(x1 + 0.5f)) & 0xFF;
        qs[j] = pack_pair(xi0, xi1, five_bit);
        qh |= static_cast<std::uint32_t>((xi0 & 0x10) >> 4) << j;
        qh |= static_cast<std::uint32_t>((xi1 & 0x10) >> 4) << (j + qk / 2);
    }
    if (five_bit) {
        for (int b = 0; b < 4; ++b) bytes(out)[4 + b] = static_cast<std::uint8_t>(qh >> (8 * b));
    }
}

/// Q8_0: d = max |x| / 127, quants roundf(x / d) (half away from zero).
void quantise_q8_0(const float* x, std::byte* out) {
    float amax = 0.0f;
    for (int j = 0; j < qk; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    put_half(out, to_half(d));
    for (int j = 0; j < qk; ++j) {
        bytes(out)[2 + j] = static_cast<std::uint8_t>(to_int8(std::round(x[j] * id)) & 0xFF);
    }
}

/// ggml's make_qx_quants with rmse_type 1 and no weights (w = x^2): a symmetric scale for n values in
/// [-nmax, nmax - 1], searched over 18 nearby scales; L gets the quants + nmax.
float make_qx_quants(int n, int nmax, const float* x, std::int8_t* L) {
    const float max = signed_absolute_max(x, n);
    if (std::fabs(max) < group_max_eps) {
        std::fill(L, L + n, std::int8_t{0});
        return 0.0f;
    }
    const auto fnmax = static_cast<float>(nmax);
    float iscale = -fnmax / max;
    float sumlx = 0.0f;
    float suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
        L[i] = static_cast<std::int8_t>(l + nmax);
        const float w = x[i] * x[i];
        const auto fl = static_cast<float>(l);
        sumlx += w * x[i] * fl;
        suml2 += w * fl * fl;
    }
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(fnmax + 0.1f * static_cast<float>(is)) / max;
        sumlx = 0.0f;
        suml2 = 0.0f;
        for (int i = 0; i < n; ++i) {
            const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
            const float w = x[i] * x[i];
            const auto fl = static_cast<float>(l);
            sumlx += w * x[i] * fl;
            suml2 += w * fl * fl;
        }
        if (suml2 > 0.0f && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) {
                const int l = nearest_int(iscale * x[i]);
                L[i] = static_cast<std::int8_t>(nmax + std::max(-nmax, std::min(nmax - 1, l)));
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/// ggml's make_q3_quants with do_rmse: symmetric quants in [-nmax, nmax - 1] weighted by x^2, refined
/// one value at a time (at most 5 passes); L gets the quants + nmax.
float make_q3_quants(int n, int nmax, const float* x, std::int8_t* L) {
    const float max = signed_absolute_max(x, n);
    if (std::fabs(max) < group_max_eps) {
        std::fill(L, L + n, std::int8_t{0});
        return 0.0f;
    }
    const float iscale = -static_cast<float>(nmax) / max;
    float sumlx = 0.0f;
    float suml2 = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = std::max(-nmax, std::min(nmax - 1, nearest_int(iscale * x[i])));
        L[i] = static_cast<std::int8_t>(l);
        const float w = x[i] * x[i];
        const auto fl = static_cast<float>(l);
        sumlx += w * x[i] * fl;
        suml2 += w * fl * fl;
    }
    for (int itry = 0; itry < 5; ++itry) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            const float w = x[i] * x[i];
            const auto li = static_cast<float>(L[i]);
            float slx = sumlx - w * x[i] * li;
            if (slx > 0.0f) {
                float sl2 = suml2 - w * li * li;
                const int new_l = std::max(-nmax, std::min(nmax - 1, nearest_int(x[i] * sl2 / slx)));
                if (new_l != L[i]) {
                    const auto fl = static_cast<float>(new_l);
                    slx += w * x[i] * fl;
                    sl2 += w * fl * fl;
                    if (sl2 > 0.0f && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = static_cast<std::int8_t>(new_l);
                        sumlx = slx;
                        suml2 = sl2;
                        ++changed;
                    }
                }
            }
        }
        if (changed == 0) break;
    }
    for (int i = 0; i < n; ++i) L[i] = static_cast<std::int8_t>(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/// ggml's make_qkx2_quants: an affine fit scale * L + min (min <= 0) of n values to quants in [0, nmax],
/// searched over nstep + 1 scales from (nmax + rmin) / range by rdelta; error weighted by weights, absolute
/// (use_mad) or squared. Returns the scale; the_min gets -min.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, std::uint8_t* L, float* the_min,
                       std::uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad) {
    float min = x[0];
    float max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0.0f) min = 0.0f;
    if (max == min) {
        std::fill(L, L + n, std::uint8_t{0});
        *the_min = -min;
        return 0.0f;
    }
    const auto fnmax = static_cast<float>(nmax);
    float iscale = fnmax / (max - min);
    float scale = 1.0f / iscale;
    float best_error = 0.0f;
    for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * (x[i] - min));
        L[i] = static_cast<std::uint8_t>(std::max(0, std::min(nmax, l)));
        float diff = scale * static_cast<float>(L[i]) + min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        best_error += weights[i] * diff;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * static_cast<float>(is) + fnmax) / (max - min);
        float sum_l = 0.0f;
        float sum_l2 = 0.0f;
        float sum_xl = 0.0f;
        for (int i = 0; i < n; ++i) {
            const int l = std::max(0, std::min(nmax, nearest_int(iscale * (x[i] - min))));
            Laux[i] = static_cast<std::uint8_t>(l);
            const float w = weights[i];
            const auto fl = static_cast<float>(l);
            sum_l += w * fl;
            sum_l2 += w * fl * fl;
            sum_xl += w * fl * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0.0f) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0.0f) {
                this_min = 0.0f;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0.0f;
            for (int i = 0; i < n; ++i) {
                float diff = this_scale * static_cast<float>(Laux[i]) + this_min - x[i];
                diff = use_mad ? std::fabs(diff) : diff * diff;
                cur_error += weights[i] * diff;
            }
            if (cur_error < best_error) {
                std::copy(Laux, Laux + n, L);
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

/// Packs 2-bit quants L (256) as Q2_K and Q3_K store them: in each half of 128, byte l holds values
/// l, l + 32, l + 64, l + 96 at bits 0, 2, 4, 6.
void pack_2bit(const std::uint8_t* L, std::uint8_t* qs) {
    for (int j = 0; j < qk_k; j += 128) {
        for (int l = 0; l < 32; ++l) {
            qs[j / 4 + l] = static_cast<std::uint8_t>(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) |
                                                      (L[j + l + 96] << 6));
        }
    }
}

void quantise_q2_k(const float* x, std::byte* out) {
    std::uint8_t* y = bytes(out);
    std::uint8_t* scales_out = y;  // 16 bytes: the scale's quant low, the min's high
    std::array<std::uint8_t, qk_k> L{};
    std::array<std::uint8_t, 16> Laux{};
    std::array<float, 16> weights{};
    std::array<float, 16> mins{};
    std::array<float, 16> scales{};
    const float q4scale = 15.0f;
    float max_scale = 0.0f;
    float max_min = 0.0f;
    for (int j = 0; j < 16; ++j) {
        for (int l = 0; l < 16; ++l) weights[static_cast<std::size_t>(l)] = std::fabs(x[16 * j + l]);
        const auto sj = static_cast<std::size_t>(j);
        scales[sj] = make_qkx2_quants(16, 3, x + 16 * j, weights.data(), L.data() + 16 * j, &mins[sj], Laux.data(),
                                      -0.5f, 0.1f, 15, true);
        max_scale = std::max(max_scale, scales[sj]);
        max_min = std::max(max_min, mins[sj]);
    }
    std::uint16_t d_bits = 0;
    std::uint16_t dmin_bits = 0;
    if (max_scale > 0.0f) {
        const float iscale = q4scale / max_scale;
        for (int j = 0; j < 16; ++j) {
            scales_out[j] = static_cast<std::uint8_t>(nearest_int(iscale * scales[static_cast<std::size_t>(j)]));
        }
        d_bits = to_half(max_scale / q4scale);
    } else {
        std::fill(scales_out, scales_out + 16, std::uint8_t{0});
        d_bits = to_half(0.0f);
    }
    if (max_min > 0.0f) {
        const float iscale = q4scale / max_min;
        for (int j = 0; j < 16; ++j) {
            const int l = nearest_int(iscale * mins[static_cast<std::size_t>(j)]);
            scales_out[j] = static_cast<std::uint8_t>(scales_out[j] | (l << 4));
        }
        dmin_bits = to_half(max_min / q4scale);
    } else {
        dmin_bits = to_half(0.0f);
    }
    put_half(out + 80, d_bits);
    put_half(out + 82, dmin_bits);
    for (int j = 0; j < 16; ++j) {
        const float d = half_float(d_bits) * static_cast<float>(scales_out[j] & 0xF);
        if (d == 0.0f) continue;
        const float dm = half_float(dmin_bits) * static_cast<float>(scales_out[j] >> 4);
        for (int ii = 0; ii < 16; ++ii) {
            const int l = nearest_int((x[16 * j + ii] + dm) / d);
            L[static_cast<std::size_t>(16 * j + ii)] = static_cast<std::uint8_t>(std::max(0, std::min(3, l)));
        }
    }
    pack_2bit(L.data(), y + 16);
}

void quantise_q3_k(const float* x, std::byte* out) {
    std::uint8_t* y = bytes(out);
    std::uint8_t* hmask = y;        // 32 bytes
    std::uint8_t* qs = y + 32;      // 64 bytes
    std::uint8_t* packed = y + 96;  // 12 bytes of 6-bit scales
    std::array<std::int8_t, qk_k> L{};
    std::array<float, 16> scales{};
    float max_scale = 0.0f;
    float amax = 0.0f;
    for (int j = 0; j < 16; ++j) {
        const auto sj = static_cast<std::size_t>(j);
        scales[sj] = make_q3_quants(16, 4, x + 16 * j, L.data() + 16 * j);
        const float scale = std::fabs(scales[sj]);
        if (scale > amax) {
            amax = scale;
            max_scale = scales[sj];
        }
    }
    std::fill(packed, packed + 12, std::uint8_t{0});
    std::uint16_t d_bits = 0;
    if (max_scale != 0.0f) {
        const float iscale = -32.0f / max_scale;
        for (int j = 0; j < 16; ++j) {
            int l = static_cast<std::int8_t>(nearest_int(iscale * scales[static_cast<std::size_t>(j)]));
            l = std::max(-32, std::min(31, l)) + 32;
            if (j < 8) {
                packed[j] = static_cast<std::uint8_t>(l & 0xF);
            } else {
                packed[j - 8] = static_cast<std::uint8_t>(packed[j - 8] | ((l & 0xF) << 4));
            }
            l >>= 4;
            packed[j % 4 + 8] = static_cast<std::uint8_t>(packed[j % 4 + 8] | (l << (2 * (j / 4))));
        }
        d_bits = to_half(1.0f / iscale);
    } else {
        d_bits = to_half(0.0f);
    }
    put_half(out + 108, d_bits);
    for (int j = 0; j < 16; ++j) {
        int sc = j < 8 ? packed[j] & 0xF : packed[j - 8] >> 4;
        sc = (sc | (((packed[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
        const float d = half_float(d_bits) * static_cast<float>(sc);
        if (d == 0.0f) continue;
        for (int ii = 0; ii < 16; ++ii) {
            const int l = std::max(-4, std::min(3, nearest_int(x[16 * j + ii] / d)));
            L[static_cast<std::size_t>(16 * j + ii)] = static_cast<std::int8_t>(l + 4);
        }
    }
    // The high bit of value j goes to hmask byte j % 32, bit j / 32; the low two bits to qs.
    std::fill(hmask, hmask + 32, std::uint8_t{0});
    std::array<std::uint8_t, qk_k> low{};
    for (int j = 0; j < qk_k; ++j) {
        int l = L[static_cast<std::size_t>(j)];
        if (l > 3) {
            hmask[j % 32] = static_cast<std::uint8_t>(hmask[j % 32] | (1 << (j / 32)));
            l -= 4;
        }
        low[static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(l);
    }
    pack_2bit(low.data(), qs);
}

/// The 6-bit scale and min of the eight sub-blocks of Q4_K and Q5_K, as get_scale_min_k4 unpacks them.
void put_scale_min_k4(std::uint8_t* s, int j, std::uint8_t ls, std::uint8_t lm) {
    if (j < 4) {
        s[j] = ls;
        s[j + 4] = lm;
    } else {
        s[j + 4] = static_cast<std::uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
        s[j - 4] = static_cast<std::uint8_t>(s[j - 4] | ((ls >> 4) << 6));
        s[j] = static_cast<std::uint8_t>(s[j] | ((lm >> 4) << 6));
    }
}

void get_scale_min_k4(const std::uint8_t* s, int j, int& scale, int& min) {
    if (j < 4) {
        scale = s[j] & 63;
        min = s[j + 4] & 63;
    } else {
        scale = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
        min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/// Q4_K (nmax 15) and Q5_K (nmax 31): eight sub-blocks of 32 fitted by make_qkx2_quants, their scales and
/// mins quantised to 6 bits against fp16 d and dmin, then every value requantised against those.
void quantise_q45_k(const float* x, std::byte* out, bool five_bit) {
    std::uint8_t* y = bytes(out);
    std::uint8_t* packed = y + 4;  // 12 bytes
    const int nmax = five_bit ? 31 : 15;
    std::array<std::uint8_t, qk_k> L{};
    std::array<std::uint8_t, 32> Laux{};
    std::array<float, 32> weights{};
    std::array<float, 8> mins{};
    std::array<float, 8> scales{};
    float max_scale = 0.0f;
    float max_min = 0.0f;
    for (int j = 0; j < 8; ++j) {
        const auto sj = static_cast<std::size_t>(j);
        float sum_x2 = 0.0f;
        for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av_x = std::sqrt(sum_x2 / 32.0f);
        for (int l = 0; l < 32; ++l) weights[static_cast<std::size_t>(l)] = av_x + std::fabs(x[32 * j + l]);
        scales[sj] = make_qkx2_quants(32, nmax, x + 32 * j, weights.data(), L.data() + 32 * j, &mins[sj],
                                      Laux.data(), five_bit ? -0.5f : -1.0f, 0.1f, five_bit ? 15 : 20, false);
        max_scale = std::max(max_scale, scales[sj]);
        max_min = std::max(max_min, mins[sj]);
    }
    const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
    std::fill(packed, packed + 12, std::uint8_t{0});
    for (int j = 0; j < 8; ++j) {
        const auto sj = static_cast<std::size_t>(j);
        auto ls = static_cast<std::uint8_t>(nearest_int(inv_scale * scales[sj]));
        auto lm = static_cast<std::uint8_t>(nearest_int(inv_min * mins[sj]));
        ls = std::min<std::uint8_t>(63, ls);
        lm = std::min<std::uint8_t>(63, lm);
        put_scale_min_k4(packed, j, ls, lm);
    }
    const std::uint16_t d_bits = to_half(max_scale / 63.0f);
    const std::uint16_t dmin_bits = to_half(max_min / 63.0f);
    put_half(out, d_bits);
    put_half(out + 2, dmin_bits);
    for (int j = 0; j < 8; ++j) {
        int sc = 0;
        int m = 0;
        get_scale_min_k4(packed, j, sc, m);
        const float d = half_float(d_bits) * static_cast<float>(sc);
        if (d == 0.0f) continue;
        const float dm = half_float(dmin_bits) * static_cast<float>(m);
        for (int ii = 0; ii < 32; ++ii) {
            const int l = nearest_int((x[32 * j + ii] + dm) / d);
            L[static_cast<std::size_t>(32 * j + ii)] = static_cast<std::uint8_t>(std::max(0, std::min(nmax, l)));
        }
    }
    if (!five_bit) {
        std::uint8_t* q = y + 16;
        for (int j = 0; j < qk_k; j += 64) {
            for (int l = 0; l < 32; ++l) q[l] = static_cast<std::uint8_t>(L[static_cast<std::size_t>(j + l)] |
                                                                          (L[static_cast<std::size_t>(j + l + 32)] << 4));
            q += 32;
        }
        return;
    }
    std::uint8_t* qh = y + 16;  // 32 bytes: value n + j's fifth bit at bit 2 * (n / 64), n + j + 32's one above
    std::uint8_t* ql = y + 48;  // 128 bytes
    std::fill(qh, qh + 32, std::uint8_t{0});
    int m1 = 1;
    int m2 = 2;
    for (int n = 0; n < qk_k; n += 64) {
        for (int j = 0; j < 32; ++j) {
            int l1 = L[static_cast<std::size_t>(n + j)];
            if (l1 > 15) {
                l1 -= 16;
                qh[j] = static_cast<std::uint8_t>(qh[j] | m1);
            }
            int l2 = L[static_cast<std::size_t>(n + j + 32)];
            if (l2 > 15) {
                l2 -= 16;
                qh[j] = static_cast<std::uint8_t>(qh[j] | m2);
            }
            ql[j] = static_cast<std::uint8_t>(l1 | (l2 << 4));
        }
        m1 <<= 2;
        m2 <<= 2;
        ql += 32;
    }
}

void quantise_q6_k(const float* x, std::byte* out) {
    std::uint8_t* y = bytes(out);
    std::array<std::int8_t, qk_k> L{};
    std::array<float, 16> scales{};
    float max_scale = 0.0f;
    float max_abs_scale = 0.0f;
    for (int ib = 0; ib < 16; ++ib) {
        const float scale = make_qx_quants(16, 32, x + 16 * ib, L.data() + 16 * ib);
        scales[static_cast<std::size_t>(ib)] = scale;
        if (std::fabs(scale) > max_abs_scale) {
            max_abs_scale = std::fabs(scale);
            max_scale = scale;
        }
    }
    std::fill(y, y + 210, std::uint8_t{0});
    if (max_abs_scale < group_max_eps) {
        put_half(out + 208, to_half(0.0f));
        return;
    }
    const float iscale = -128.0f / max_scale;
    const std::uint16_t d_bits = to_half(1.0f / iscale);
    put_half(out + 208, d_bits);
    std::array<std::int8_t, 16> block_scales{};
    for (int ib = 0; ib < 16; ++ib) {
        const int l = std::min(127, nearest_int(iscale * scales[static_cast<std::size_t>(ib)]));
        block_scales[static_cast<std::size_t>(ib)] = static_cast<std::int8_t>(l);
        y[192 + ib] = static_cast<std::uint8_t>(l & 0xFF);
    }
    for (int j = 0; j < 16; ++j) {
        const float d = half_float(d_bits) * static_cast<float>(block_scales[static_cast<std::size_t>(j)]);
        if (d == 0.0f) continue;
        for (int ii = 0; ii < 16; ++ii) {
            const int l = std::max(-32, std::min(31, nearest_int(x[16 * j + ii] / d)));
            L[static_cast<std::size_t>(16 * j + ii)] = static_cast<std::int8_t>(l + 32);
        }
    }
    std::uint8_t* ql = y;
    std::uint8_t* qh = y + 128;
    for (int j = 0; j < qk_k; j += 128) {
        for (int l = 0; l < 32; ++l) {
            const auto at = [&](int i) { return static_cast<int>(L[static_cast<std::size_t>(j + l + i)]); };
            ql[l] = static_cast<std::uint8_t>((at(0) & 0xF) | ((at(64) & 0xF) << 4));
            ql[l + 32] = static_cast<std::uint8_t>((at(32) & 0xF) | ((at(96) & 0xF) << 4));
            qh[l] = static_cast<std::uint8_t>((at(0) >> 4) | ((at(32) >> 4) << 2) | ((at(64) >> 4) << 4) |
                                              ((at(96) >> 4) << 6));
        }
        ql += 64;
        qh += 32;
    }
}

/// One block of type from its values x.
void quantise_block(ElementType type, const float* x, std::byte* out) {
    switch (type) {
        case ElementType::q4_0: return quantise_symmetric(x, out, false);
        case ElementType::q5_0: return quantise_symmetric(x, out, true);
        case ElementType::q4_1: return quantise_with_min(x, out, false);
        case ElementType::q5_1: return quantise_with_min(x, out, true);
        case ElementType::q8_0: return quantise_q8_0(x, out);
        case ElementType::q2_k: return quantise_q2_k(x, out);
        case ElementType::q3_k: return quantise_q3_k(x, out);
        case ElementType::q4_k: return quantise_q45_k(x, out, false);
        case ElementType::q5_k: return quantise_q45_k(x, out, true);
        case ElementType::q6_k: return quantise_q6_k(x, out);
        default: break;
    }
    throw std::invalid_argument("element type " + std::string(element_type_name(type)) + " is not block-quantised");
}

}  // namespace

std::uint16_t half_bits(double x) {
    const auto sign = static_cast<std::uint16_t>(std::signbit(x) ? 0x8000 : 0);
    if (std::isnan(x)) return static_cast<std::uint16_t>(sign | 0x7E00);
    const double rounded = std::fabs(round_to_fp16(x));
    if (std::isinf(rounded)) return static_cast<std::uint16_t>(sign | 0x7C00);
    if (rounded == 0.0) return sign;
    const int exponent = std::ilogb(rounded);
    if (exponent < -14) {  // subnormal: a whole multiple of 2^-24
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::ldexp(rounded, 24)));
    }
    const auto fraction = static_cast<std::uint16_t>(std::ldexp(rounded, 10 - exponent) - 1024.0);
    return static_cast<std::uint16_t>(sign | ((exponent + 15) << 10) | fraction);
}

std::uint16_t bfloat16_bits(double x) {
    if (std::isnan(x)) return static_cast<std::uint16_t>(std::signbit(x) ? 0xFFC0 : 0x7FC0);
    // round_to_bf16's value is a bfloat16, so float32 holds it exactly: its top 16 bits are the answer.
    const auto as_float = static_cast<float>(round_to_bf16(x));
    return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(as_float) >> 16);
}

void quantise(ElementType type, const float* x, std::size_t count, std::byte* out) {
    const auto values = static_cast<std::size_t>(block_values(type));
    const auto stride = static_cast<std::size_t>(block_bytes(type));
    if (!embed::is_quantised(type)) {
        throw std::invalid_argument("element type " + std::string(element_type_name(type)) + " is not block-quantised");
    }
    for (std::size_t block = 0; block < count / values; ++block) quantise_block(type, x + block * values, out + block * stride);
}

std::span<const int> half_scale_offsets(ElementType type) {
    static constexpr int d_only[] = {0};
    static constexpr int d_and_min[] = {0, 2};
    static constexpr int q2_k[] = {80, 82};
    static constexpr int q3_k[] = {108};
    static constexpr int q6_k[] = {208};
    switch (type) {
        case ElementType::q4_0: case ElementType::q5_0: case ElementType::q8_0: return d_only;
        case ElementType::q4_1: case ElementType::q5_1: case ElementType::q4_k: case ElementType::q5_k:
            return d_and_min;
        case ElementType::q2_k: return q2_k;
        case ElementType::q3_k: return q3_k;
        case ElementType::q6_k: return q6_k;
        default: return {};
    }
}

}  // namespace embed::io
