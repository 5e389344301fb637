#pragma once
// A fixed-capacity ring: pushing onto a full ring drops the oldest element. No allocation after
// construction.

#include <QtGlobal>

#include <vector>

namespace lutra::console {

template <typename T> class RingBuffer {
public:
    explicit RingBuffer(qsizetype capacity = 0) : m_data(static_cast<std::size_t>(capacity)) {}

    qsizetype capacity() const { return static_cast<qsizetype>(m_data.size()); }
    qsizetype size() const { return m_size; }
    bool isEmpty() const { return m_size == 0; }

    void push(const T &value)
    {
        if (m_data.empty()) {
            return;
        }
        m_data[(m_start + static_cast<std::size_t>(m_size)) % m_data.size()] = value;
        if (m_size < capacity()) {
            ++m_size;
        } else {
            m_start = (m_start + 1) % m_data.size();
        }
    }

    // Oldest first.
    const T &operator[](qsizetype i) const
    {
        return m_data[(m_start + static_cast<std::size_t>(i)) % m_data.size()];
    }
    const T &back() const { return (*this)[m_size - 1]; }

    void clear()
    {
        m_start = 0;
        m_size = 0;
    }

private:
    std::vector<T> m_data;
    std::size_t m_start = 0;
    qsizetype m_size = 0;
};

} // namespace lutra::console
