// RAID-0 striping arithmetic: pieces, file offsets, sizes both ways, against a brute-force model.
#include "client/layout.h"

#include <QTest>

#include <algorithm>
#include <cstdint>
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

    void rowsGoInWholeRpcs()
    {
        // A window of rowPages() file pages from a multiple of it reaches each target as one
        // range of object pages within one RPC (RPCs are cut at multiples of rpcPages object
        // pages), and with stripes that fit an RPC, every target gets one. Never less than a
        // stripe or an RPC (what windows ended at before rows).
        constexpr std::uint64_t kPage = 4096;
        for (const std::uint32_t targets : {1u, 2u, 3u, 4u}) {
            for (const std::uint64_t stripePages : {1u, 2u, 4u, 8u}) {
                for (const std::uint64_t rpcPages : {1u, 2u, 4u, 8u, 16u}) {
                    const StripeLayout layout{targets, stripePages * kPage};
                    const std::uint64_t row = layout.rowPages(rpcPages, kPage);
                    QVERIFY(row >= std::min(stripePages, rpcPages));
                    for (std::uint64_t window = 0; window < 4; ++window) {
                        std::vector<std::uint64_t> first(targets, UINT64_MAX);
                        std::vector<std::uint64_t> count(targets, 0);
                        for (std::uint64_t page = window * row; page < (window + 1) * row; ++page) {
                            const auto piece = layout.pieceAt(page * kPage, kPage);
                            const std::uint64_t objectPage = piece.objectOffset / kPage;
                            if (count[piece.target] == 0) {
                                first[piece.target] = objectPage;
                            }
                            // Contiguous in the object, and in the RPC its first page opened.
                            QCOMPARE(objectPage, first[piece.target] + count[piece.target]);
                            QCOMPARE(objectPage / rpcPages, first[piece.target] / rpcPages);
                            ++count[piece.target];
                        }
                        if (targets > 1 && stripePages <= rpcPages) {
                            for (std::uint32_t t = 0; t < targets; ++t) {
                                QCOMPARE(count[t], stripePages);
                            }
                        }
                    }
                }
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestStripeLayout)
#include "test_stripe_layout.moc"
