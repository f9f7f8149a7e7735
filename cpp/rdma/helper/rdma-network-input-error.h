// The one error format of RdmaNetwork's input checks: "<what> <index>: <msg>"
// as std::invalid_argument, shared by the builder and the flow manager.
#ifndef RDMA_NETWORK_INPUT_ERROR_H
#define RDMA_NETWORK_INPUT_ERROR_H

#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ns3
{

[[noreturn]] inline void
RdmaInputError(const char* what, size_t index, const std::string& msg)
{
    std::ostringstream os;
    os << what << ' ' << index << ": " << msg;
    throw std::invalid_argument(os.str());
}

} // namespace ns3

#endif
