import Testing
@testable import PulseServer
@testable import PulseServerStorage

@Suite struct TokenBucketsTests {
    @Test func aBucketAllowsItsBurstThenItsRate() {
        let buckets = TokenBuckets()
        let limit = RateLimit(rate: 5, burst: 10)
        for _ in 0..<10 { #expect(buckets.take("d", limit: limit, at: 100) == .allowed) }
        #expect(buckets.take("d", limit: limit, at: 100) == .limited(retryAfter: 1))
        // Another key has its own bucket.
        #expect(buckets.take("e", limit: limit, at: 100) == .allowed)
        // 0.2 s later one token is back; a slow limit says how long to wait, rounded up.
        #expect(buckets.take("d", limit: limit, at: 100.2) == .allowed)
        #expect(buckets.take("d", limit: limit, at: 100.2) == .limited(retryAfter: 1))
        let slow = RateLimit(rate: 0.1, burst: 1)
        #expect(buckets.take("s", limit: slow, at: 0) == .allowed)
        #expect(buckets.take("s", limit: slow, at: 1) == .limited(retryAfter: 9))
        // A clock that goes back refills nothing.
        #expect(buckets.take("s", limit: slow, at: -50) == .limited(retryAfter: 9))
    }

    @Test func fullBucketsAreForgotten() {
        let buckets = TokenBuckets()
        let limit = RateLimit(rate: 5, burst: 10)
        for index in 0..<5000 { _ = buckets.take("device \(index)", limit: limit, at: 0) }
        #expect(buckets.count == 5000)
        // Much later every one of them is full again: the sweeps of the shards that keep being used drop them.
        for index in 0..<140_000 { _ = buckets.take("later \(index % 200)", limit: limit, at: 1000 + Double(index) / 1000) }
        #expect(buckets.count <= 200)
    }
}
