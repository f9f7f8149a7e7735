// Switch egress-queue length histograms in HPCC's QLEN_MON_FILE form: every
// switch port's queued bytes sampled at a fixed period inside a time window,
// counted in 1 KB (1000-byte) bins, the cumulative counts kept at every
// multiple of a dump period.
#ifndef RDMA_QLEN_MONITOR_H
#define RDMA_QLEN_MONITOR_H

#include "rdma-switch.h"

#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace ns3
{

/// Cumulative histogram of one switch port's queue at one dump time.
struct RdmaQlenHistogram
{
    int64_t timeNs;
    uint32_t node;
    uint32_t port;
    std::vector<uint64_t> counts; ///< counts[k]: samples with k KB queued
};

class RdmaQlenMonitor
{
  public:
    /// Sample every `interval` from `start` until a sample at or after `end`;
    /// keep the histograms whenever the time is a multiple of `dump`.
    void Configure(Time start, Time end, Time interval, Time dump);
    bool Enabled() const;
    /// Schedule the first sample (the switches must outlive the run).
    void Start(const std::vector<Ptr<RdmaSwitch>>& switches, uint64_t* eventCounter);
    const std::vector<RdmaQlenHistogram>& GetDumps() const;

  private:
    void Tick();

    Time m_start;
    Time m_end;
    Time m_interval;
    Time m_dump;
    const std::vector<Ptr<RdmaSwitch>>* m_switches = nullptr;
    uint64_t* m_events = nullptr;
    std::map<std::pair<uint32_t, uint32_t>, std::vector<uint64_t>> m_hist;
    std::vector<RdmaQlenHistogram> m_dumps;
};

} // namespace ns3

#endif
