// Sliding window of a flow's rate samples for steady-state identification
// (Wormhole §5.1, Eq. 6-7): steady when (max - min) / mean < theta over the
// last `capacity` samples. Each sample also carries the flow's in-flight
// bytes and how far its sending rate was from its delivered rate over the
// sample's span (docs/fast-forward.md). Max and min are kept in monotonic
// queues so each sample costs O(1) amortized.
#ifndef NS3_WORMHOLE_RATE_WINDOW_H
#define NS3_WORMHOLE_RATE_WINDOW_H

#include <cstdint>
#include <cstddef>
#include <utility>
#include <vector>

namespace ns3
{
namespace wormhole
{

class RateWindow
{
  public:
    struct Sample
    {
        uint64_t timeNs;
        double rate;
        uint64_t acked;
        double inflight; ///< payload bytes sent but not yet acknowledged
    };

    RateWindow()
        : RateWindow(2000)
    {
    }

    explicit RateWindow(uint32_t capacity);

    void SetCapacity(uint32_t capacity);
    void Clear();
    /// `mismatch`: |sending - delivered| / delivered rate over the sample's span.
    void Push(uint64_t timeNs, double rate, uint64_t acked, double inflight = 0, double mismatch = 0);

    bool Full() const;
    uint32_t Capacity() const
    {
        return m_capacity;
    }
    /// Samples pushed since the last Clear() (may exceed the capacity).
    uint64_t Pushed() const;
    uint32_t Size() const
    {
        return static_cast<uint32_t>(m_ring.size());
    }
    double Mean() const;
    double Spread() const; ///< (max - min) / mean; +inf when empty
    double MeanMismatch() const; ///< mean mismatch of the window's samples (0 when empty)
    const Sample& Oldest() const;
    const Sample& Newest() const;
    /// The position of the first sample at or after `timeNs`, searching
    /// forward from position `from`; the newest's if none is (Size() > 0).
    uint32_t Seek(uint64_t timeNs, uint32_t from) const;
    /// The sample at position k from the oldest (0 <= k < Size()).
    const Sample& At(uint32_t k) const;

  private:
    uint32_t m_capacity;
    std::vector<Sample> m_ring;
    uint64_t m_pushed = 0; ///< samples pushed since Clear(); index of the next
    double m_sum = 0;
    double m_mismatchSum = 0;
    std::vector<double> m_mismatch; ///< per ring slot
    /// A monotonic queue of (index, rate) in a vector read from `head`:
    /// a deque allocates a chunk as it walks forward every few dozen
    /// samples, and every flow's window does this at every acknowledgement.
    struct Extremes
    {
        std::vector<std::pair<uint64_t, double>> items;
        size_t head = 0;
        bool Empty() const
        {
            return head == items.size();
        }
        const std::pair<uint64_t, double>& Front() const
        {
            return items[head];
        }
        void PopFront()
        {
            // Drop the consumed prefix once it is most of the vector.
            if (++head > 32 && 2 * head > items.size())
            {
                items.erase(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(head));
                head = 0;
            }
        }
        void Clear()
        {
            items.clear();
            head = 0;
        }
    };
    Extremes m_max; ///< decreasing rates
    Extremes m_min; ///< increasing rates
};

} // namespace wormhole
} // namespace ns3

#endif
