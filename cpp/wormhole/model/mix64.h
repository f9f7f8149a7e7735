// The 64-bit finalizer of splitmix64: spreads every input bit over the
// output. What every seeded, counter-based draw of the kernel and the RDMA
// model (ECN marks, losses, ECMP salts, pooled-share dispersion) hashes its
// key with, so a run repeats itself whatever else happens in it.
#ifndef NS3_WORMHOLE_MIX64_H
#define NS3_WORMHOLE_MIX64_H

#include <cstdint>

namespace ns3::wormhole
{

inline uint64_t
Mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

} // namespace ns3::wormhole

#endif
