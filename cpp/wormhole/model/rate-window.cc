#include "rate-window.h"

#include <algorithm>
#include <limits>

namespace ns3
{
namespace wormhole
{

RateWindow::RateWindow(uint32_t capacity)
    : m_capacity(std::max<uint32_t>(capacity, 1))
{
}

void
RateWindow::SetCapacity(uint32_t capacity)
{
    m_capacity = std::max<uint32_t>(capacity, 1);
    Clear();
}

void
RateWindow::Clear()
{
    m_ring.clear();
    m_pushed = 0;
    m_sum = 0;
    m_max.Clear();
    m_min.Clear();
    m_mismatch.clear();
    m_mismatchSum = 0;
}

void
RateWindow::Push(uint64_t timeNs, double rate, uint64_t acked, double inflight, double mismatch)
{
    const uint64_t index = m_pushed++;
    if (m_ring.empty())
    {
        // A window is made for every flow and most fill a few hundred
        // samples: one allocation each, not one per doubling.
        const uint32_t expect = std::min<uint32_t>(m_capacity, 512);
        m_ring.reserve(expect);
        m_mismatch.reserve(expect);
        m_max.items.reserve(64);
        m_min.items.reserve(64);
    }
    if (m_ring.size() < m_capacity)
    {
        m_ring.push_back({timeNs, rate, acked, inflight});
        m_mismatch.push_back(mismatch);
    }
    else
    {
        Sample& slot = m_ring[index % m_capacity];
        m_sum -= slot.rate;
        m_mismatchSum -= m_mismatch[index % m_capacity];
        m_mismatch[index % m_capacity] = mismatch;
        slot = {timeNs, rate, acked, inflight};
    }
    m_sum += rate;
    m_mismatchSum += mismatch;
    const uint64_t first = m_pushed > m_capacity ? m_pushed - m_capacity : 0;
    while (!m_max.Empty() && m_max.items.back().second <= rate)
    {
        m_max.items.pop_back();
    }
    m_max.items.emplace_back(index, rate);
    while (m_max.Front().first < first)
    {
        m_max.PopFront();
    }
    while (!m_min.Empty() && m_min.items.back().second >= rate)
    {
        m_min.items.pop_back();
    }
    m_min.items.emplace_back(index, rate);
    while (m_min.Front().first < first)
    {
        m_min.PopFront();
    }
}

bool
RateWindow::Full() const
{
    return m_ring.size() == m_capacity;
}

uint64_t
RateWindow::Pushed() const
{
    return m_pushed;
}

double
RateWindow::Mean() const
{
    return m_ring.empty() ? 0.0 : m_sum / static_cast<double>(m_ring.size());
}

double
RateWindow::Spread() const
{
    const double mean = Mean();
    if (m_ring.empty() || mean <= 0)
    {
        return std::numeric_limits<double>::infinity();
    }
    return (m_max.Front().second - m_min.Front().second) / mean;
}

double
RateWindow::MeanMismatch() const
{
    return m_ring.empty() ? 0.0 : m_mismatchSum / static_cast<double>(m_ring.size());
}

uint32_t
RateWindow::Seek(uint64_t timeNs, uint32_t from) const
{
    while (from + 1 < Size() && At(from).timeNs < timeNs)
    {
        ++from;
    }
    return from;
}

const RateWindow::Sample&
RateWindow::At(uint32_t k) const
{
    const uint64_t first = m_pushed - m_ring.size();
    return m_ring[(first + k) % m_capacity];
}

const RateWindow::Sample&
RateWindow::Oldest() const
{
    return At(0);
}

const RateWindow::Sample&
RateWindow::Newest() const
{
    return At(Size() - 1);
}

} // namespace wormhole
} // namespace ns3
