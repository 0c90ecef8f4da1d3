#pragma once
// Flags shared by `ppsim partition` and `ppsim lynx`: the cost file, the schedule whose in-flight
// counts set the stage budgets, the memory budget and the communication windows (remat/lynx.h).
#include "remat/partition.h"

#include <boost/program_options.hpp>

namespace ppsim::cli {

/// Adds the positional COSTS file, --stages, --schedule, --memory, --optimizer-shards, --tp,
/// --tp-bandwidth,
/// --p2p-bandwidth, --bubble-ms and --microbatches (a first run of the schedule).
void add_lynx_options(boost::program_options::options_description &options,
                      boost::program_options::positional_options_description &positional);

/// Reads them (mode left balanced); with --microbatches the in-flight counts are measured on a
/// first run. Throws ppsim::Error on a non-positive count or bandwidth.
PartitionOptions lynx_options_from(const boost::program_options::variables_map &values);

} // namespace ppsim::cli
