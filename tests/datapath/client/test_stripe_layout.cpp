// RAID-0 striping arithmetic: pieces, file offsets, sizes both ways, against a brute-force model.
#include "client/layout.h"

#include <QTest>

#include <vector>

using lutra::client::StripeLayout;

class TestStripeLayout : public QObject {
    Q_OBJECT
private slots:
    void piecesFollowTheStripes()
    {
        const StripeLayout layout{3, 4096};
        auto piece = layout.pieceAt(0, 10000);
        QCOMPARE(piece.target, 0u);
        QCOMPARE(piece.objectOffset, std::uint64_t(0));
        QCOMPARE(piece.length, std::uint64_t(4096));
        piece = layout.pieceAt(4096 + 100, 50);
        QCOMPARE(piece.target, 1u);
        QCOMPARE(piece.objectOffset, std::uint64_t(100));
        QCOMPARE(piece.length, std::uint64_t(50));
        piece = layout.pieceAt(3 * 4096 + 5, 1 << 20); // second row, back on target 0
        QCOMPARE(piece.target, 0u);
        QCOMPARE(piece.objectOffset, std::uint64_t(4096 + 5));
        QCOMPARE(piece.length, std::uint64_t(4096 - 5));
    }

    void matchesABruteForceModel()
    {
        // Every byte of a 10-stripe file, mapped one at a time, lands where the maths says, and
        // the sizes computed both ways agree for every file length.
        for (const std::uint32_t targets : {1u, 2u, 3u, 4u}) {
            const StripeLayout layout{targets, 8};
            std::vector<std::uint64_t> objectSize(targets, 0);
            for (std::uint64_t offset = 0; offset < 80; ++offset) {
                const auto piece = layout.pieceAt(offset, 1);
                QCOMPARE(layout.fileOffset(piece.target, piece.objectOffset), offset);
                objectSize[piece.target] =
                    std::max(objectSize[piece.target], piece.objectOffset + 1);
                std::uint64_t size = 0;
                for (std::uint32_t t = 0; t < targets; ++t) {
                    size = std::max(size, layout.fileSizeFrom(t, objectSize[t]));
                    QCOMPARE(layout.objectSizeFor(t, offset + 1), objectSize[t]);
                }
                QCOMPARE(size, offset + 1);
            }
            for (std::uint32_t t = 0; t < targets; ++t) {
                QCOMPARE(layout.objectSizeFor(t, 0), std::uint64_t(0));
                QCOMPARE(layout.fileSizeFrom(t, 0), std::uint64_t(0));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestStripeLayout)
#include "test_stripe_layout.moc"
