#pragma once
// The whole library: token ids to vectors and back to scores over the vocabulary.

#include "embed/counting.hpp"
#include "embed/element_type.hpp"
#include "embed/io.hpp"
#include "embed/logits.hpp"
#include "embed/lookup.hpp"
#include "embed/one_hot.hpp"
#include "embed/precision.hpp"
#include "embed/python_random.hpp"
#include "embed/quantised_table.hpp"
#include "embed/scaling.hpp"
#include "embed/scan.hpp"
#include "embed/similarity.hpp"
#include "embed/table.hpp"
#include "embed/tied_embedding.hpp"
#include "embed/types.hpp"
#include "embed/vocabulary.hpp"
