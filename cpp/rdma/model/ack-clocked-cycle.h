// A controller cycle clocked by acknowledgements: it opens at an ACK and
// closes when the ACKs pass the sequence sent by then (HPCC's and TIMELY's
// once-per-round-trip updates, DCTCP's observation window). It owns where such a cycle stands after
// the Wormhole kernel credits bytes the flow never sends.
#ifndef ACK_CLOCKED_CYCLE_H
#define ACK_CLOCKED_CYCLE_H

#include <algorithm>
#include <cstdint>

namespace ns3
{

class AckClockedCycle
{
  public:
    /// Open a cycle at an ACK for `ackSeq`: it closes when the ACKs pass
    /// `sndNxt`, a round trip's bytes later.
    void Open(uint64_t sndNxt, uint64_t ackSeq)
    {
        m_opened = m_end = sndNxt;
        m_length = sndNxt - std::min(sndNxt, ackSeq);
        m_credited = 0;
    }

    /// Whether an ACK for `ackSeq` closes the open cycle.
    bool ClosedBy(uint64_t ackSeq) const
    {
        return ackSeq > m_end;
    }

    /// The kernel credited `bytes` (< 0: took them back) that the flow does
    /// not send, `acked` bytes being acknowledged. Sequence numbers do not
    /// move over a credit (the flow's size shrinks instead), so a cycle left
    /// alone resumes at the phase the skip began in, while the reference's
    /// went on through those bytes and the cycles after them. Left alone,
    /// whatever follows a skip (a joining flow, a completion) meets the flow
    /// at one phase of its updates every time instead of anywhere in the
    /// cycle as in the reference; with HPCC that phase alone moved a joined
    /// pair's split by up to 8% (docs/fast-forward.md). The cycle's end goes
    /// where the reference's is, its length taken as constant, as in the
    /// steady state a skip stands for. Credits taken back in full (a skip
    /// undone for a replay) put it back exactly where it was.
    void Credit(int64_t bytes, uint64_t acked)
    {
        m_credited += bytes;
        if (m_credited == 0 || m_length == 0)
        {
            m_end = m_opened;
            return;
        }
        const auto length = static_cast<int64_t>(m_length);
        const int64_t ahead = static_cast<int64_t>(m_opened) - m_credited - static_cast<int64_t>(acked);
        m_end = acked + static_cast<uint64_t>((ahead % length + length) % length);
    }

  private:
    uint64_t m_opened = 0;  ///< the sequence the open cycle closes at, as opened
    uint64_t m_end = 0;     ///< where it closes, credits counted
    uint64_t m_length = 0;  ///< bytes in flight when it opened
    int64_t m_credited = 0; ///< bytes credited since it opened
};

} // namespace ns3

#endif
