// Rows of numbers of differing lengths in one allocation: a memo record's
// per-flow congestion-control states and per-hop queues. Held as a vector
// of vectors, each row cost its own heap block and header, 2.4x the numbers
// themselves in a MoE step's records (docs/memo.md, "What a record costs").
#ifndef NS3_WORMHOLE_RAGGED_ROWS_H
#define NS3_WORMHOLE_RAGGED_ROWS_H

#include <cstdint>
#include <span>
#include <vector>

namespace ns3
{
namespace wormhole
{

class RaggedRows
{
  public:
    size_t size() const
    {
        return m_end.size();
    }

    std::span<const double> operator[](size_t row) const
    {
        const uint32_t begin = row == 0 ? 0 : m_end[row - 1];
        return {m_values.data() + begin, m_end[row] - begin};
    }

    /// Appends a row of `length` zeros and returns it to be filled (valid
    /// until the next append).
    std::span<double> Append(size_t length)
    {
        const auto begin = static_cast<uint32_t>(m_values.size());
        m_values.resize(m_values.size() + length, 0.0);
        m_end.push_back(begin + static_cast<uint32_t>(length));
        return {m_values.data() + begin, length};
    }

    void Append(std::span<const double> row)
    {
        m_values.insert(m_values.end(), row.begin(), row.end());
        m_end.push_back(static_cast<uint32_t>(m_values.size()));
    }

    /// Gives back what appending reserved beyond the rows (a record is kept
    /// for the rest of the run).
    void ShrinkToFit()
    {
        m_values.shrink_to_fit();
        m_end.shrink_to_fit();
    }

  private:
    std::vector<double> m_values;
    std::vector<uint32_t> m_end; ///< one past each row's last value
};

} // namespace wormhole
} // namespace ns3

#endif
