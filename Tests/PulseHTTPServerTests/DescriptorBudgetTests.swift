import PulseHTTPServer
import PulseSystem
import Testing

/// Issue 20: how many connections the open-files limit leaves room for, and the refusal of a
/// `--max-connections` beyond it.
@Suite struct DescriptorBudgetTests {
    typealias Budget = HTTPServer.DescriptorBudget

    /// Connections, libmicrohttpd's headroom above them (`max(64 × threads, connections / 8)`), three per
    /// thread (epoll, wake-up pipe) and the listen socket.
    @Test func neededCountsTheHeadroomThreadsAndListenSocket() {
        #expect(Budget.needed(maxConnections: 100, threads: 2) == 100 + 128 + 6 + 1)
        #expect(Budget.needed(maxConnections: 50_000, threads: 2) == 50_000 + 6_250 + 6 + 1)
        #expect(Budget.needed(maxConnections: 1_000_000, threads: 256) == 1_000_000 + 125_000 + 768 + 1)
    }

    /// The allowed figure is the largest that fits: it fits, one more does not, on both sides of the point
    /// where the headroom turns from `64 × threads` to an eighth.
    @Test(arguments: [1, 2, 8])
    func allowedIsTheLargestThatFits(threads: Int) {
        for limit in stride(from: 0, through: 12_000, by: 7) + [65_536, 1_048_576] {
            let budget = Budget(limit: limit, reserve: 94, threads: threads)
            let allowed = budget.allowedConnections
            if allowed > 0 {
                #expect(budget.limitNeeded(maxConnections: allowed) <= limit, "limit \(limit): \(allowed) does not fit")
            } else {
                #expect(budget.limitNeeded(maxConnections: 1) > limit, "limit \(limit): one connection fits but 0 allowed")
            }
            #expect(budget.limitNeeded(maxConnections: allowed + 1) > limit, "limit \(limit): \(allowed + 1) fits as well")
        }
    }

    @Test func fiftyThousandStreamsNeedALimitAboveFiftySixThousand() {
        let budget = Budget(limit: 65_536, reserve: 94, threads: 2)
        #expect(budget.limitNeeded(maxConnections: 50_000) == 56_257 + 94)
        #expect(budget.allowedConnections >= 50_000)
        #expect(Budget(limit: 20_000, reserve: 94, threads: 2).allowedConnections < 20_000)
    }

    @Test func noLimitAllowsAnything() throws {
        let budget = Budget(limit: Int.max, reserve: 94, threads: 2)
        #expect(budget.allowedConnections == Int.max)
        try budget.check(maxConnections: 1_000_000)
        #expect(budget.summary(maxConnections: 20_000) == "20000 connections at most (no open-files limit)")
    }

    @Test func aGivenMaximumBeyondTheLimitIsRefusedNamingTheFlagAndTheFix() throws {
        let budget = Budget(limit: 1024, reserve: 94, threads: 2)
        let error = #expect(throws: HTTPServerError.self) { try budget.check(maxConnections: 5000) }
        #expect(error == .tooFewDescriptors(maxConnections: 5000, allowed: budget.allowedConnections, limit: 1024, needed: 5000 + 625 + 7 + 94))
        let text = try #require(error).description
        for part in ["--max-connections 5000", "1024", "allows \(budget.allowedConnections) connections", "ulimit -n 5726", "LimitNOFILE=5726"] {
            #expect(text.contains(part), "\(part) missing from \(text)")
        }
        #expect(!text.contains("\n"))
        #expect(throws: HTTPServerError.self) { _ = try budget.fit(maxConnections: 5000, given: true) }
        #expect(try budget.fit(maxConnections: 500, given: true) == 500)
    }

    /// The default is not the operator's word: lowered to what fits, and the start line says so.
    @Test func theDefaultIsLoweredToFitAndSaysSo() throws {
        let budget = Budget(limit: 20_000, reserve: 94, threads: 2)
        let fitted = try budget.fit(maxConnections: 20_000, given: false)
        #expect(fitted == budget.allowedConnections)
        #expect(budget.summary(maxConnections: fitted, lowered: 20_000)
            == "\(fitted) connections at most (the default 20000 lowered to what the open-files limit 20000 allows)")
        #expect(budget.summary(maxConnections: 1000, lowered: 1000) == "1000 connections at most (the open-files limit 20000 allows \(fitted))")
        #expect(try Budget(limit: 10, reserve: 94, threads: 2).fit(maxConnections: 20_000, given: false) == 1)
    }

    @Test func raisingLeavesTheSoftLimitAtTheHardOne() throws {
        let raised = try #require(DescriptorLimit.raiseToHard())
        #expect(DescriptorLimit.current == raised)
        #expect(DescriptorLimit.raiseToHard() == raised)
    }
}
