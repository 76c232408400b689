// Shared between the manifest files of iceberg/: the sizes Java gives decimal values in Avro.
#pragma once

#include <cstdint>

namespace serac::iceberg {

// The bytes of the Avro fixed that holds a decimal of `precision` digits (Java's
// TypeUtil.decimalRequiredBytes): the fewest whose two's complement holds 10^precision - 1.
int32_t DecimalRequiredBytes(int32_t precision);

}  // namespace serac::iceberg
