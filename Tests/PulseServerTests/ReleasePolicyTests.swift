import PulseServer
import PulseServerStorage
import PulseSyncAPI
import Testing

/// Every combination of the release inputs against tables written out by hand: if the rules in
/// ReleasePolicy change, these rows must be changed on purpose.
@Suite struct ReleasePolicyTests {
    /// A 10-slide deck; the frontiers tried, in the order of each row's expectations.
    static let slideCount = 10
    static let frontiers: [Int?] = [nil, 0, 4, 9, 15]  // none, first, middle, last, beyond the deck

    /// `-` = nothing; `a-b` = slides a…b.
    static let keyTable: [(state: SessionState, allowDownload: Bool, venue: VenueCheck, released: [String])] = [
        //                                  frontier: none   0      4      9      15
        (.draft, false, .unlocked, /*            */ ["-", "-", "-", "-", "-"]),
        (.draft, false, .inside, /*              */ ["-", "-", "-", "-", "-"]),
        (.draft, false, .outside, /*             */ ["-", "-", "-", "-", "-"]),
        (.draft, true, .unlocked, /*             */ ["-", "-", "-", "-", "-"]),
        (.draft, true, .inside, /*               */ ["-", "-", "-", "-", "-"]),
        (.draft, true, .outside, /*              */ ["-", "-", "-", "-", "-"]),
        (.scheduled, false, .unlocked, /*        */ ["-", "-", "-", "-", "-"]),
        (.scheduled, false, .inside, /*          */ ["-", "-", "-", "-", "-"]),
        (.scheduled, false, .outside, /*         */ ["-", "-", "-", "-", "-"]),
        (.scheduled, true, .unlocked, /*         */ ["-", "-", "-", "-", "-"]),
        (.scheduled, true, .inside, /*           */ ["-", "-", "-", "-", "-"]),
        (.scheduled, true, .outside, /*          */ ["-", "-", "-", "-", "-"]),
        (.rehearsal, false, .unlocked, /*        */ ["-", "-", "-", "-", "-"]),
        (.rehearsal, false, .inside, /*          */ ["-", "-", "-", "-", "-"]),
        (.rehearsal, false, .outside, /*         */ ["-", "-", "-", "-", "-"]),
        (.rehearsal, true, .unlocked, /*         */ ["-", "-", "-", "-", "-"]),
        (.rehearsal, true, .inside, /*           */ ["-", "-", "-", "-", "-"]),
        (.rehearsal, true, .outside, /*          */ ["-", "-", "-", "-", "-"]),
        (.live, false, .unlocked, /*             */ ["-", "0-0", "0-4", "0-9", "0-9"]),
        (.live, false, .inside, /*               */ ["-", "0-0", "0-4", "0-9", "0-9"]),
        (.live, false, .outside, /*              */ ["-", "-", "-", "-", "-"]),
        (.live, true, .unlocked, /*              */ ["-", "0-0", "0-4", "0-9", "0-9"]),
        (.live, true, .inside, /*                */ ["-", "0-0", "0-4", "0-9", "0-9"]),
        (.live, true, .outside, /*               */ ["-", "-", "-", "-", "-"]),
        (.ended, false, .unlocked, /*            */ ["-", "0-0", "0-4", "0-9", "0-9"]),
        (.ended, false, .inside, /*              */ ["-", "0-0", "0-4", "0-9", "0-9"]),
        (.ended, false, .outside, /*             */ ["-", "-", "-", "-", "-"]),
        (.ended, true, .unlocked, /*             */ ["0-9", "0-9", "0-9", "0-9", "0-9"]),
        (.ended, true, .inside, /*               */ ["0-9", "0-9", "0-9", "0-9", "0-9"]),
        (.ended, true, .outside, /*              */ ["0-9", "0-9", "0-9", "0-9", "0-9"]),
    ]

    static func text(_ range: Range<Int>) -> String { range.isEmpty ? "-" : "\(range.lowerBound)-\(range.upperBound - 1)" }

    @Test func theTableCoversEveryCombinationOnce() {
        let keys = Self.keyTable.map { "\($0.state) \($0.allowDownload) \($0.venue)" }
        #expect(Set(keys).count == keys.count)
        #expect(keys.count == SessionState.allCases.count * 2 * VenueCheck.allCases.count)
        #expect(Self.keyTable.allSatisfy { $0.released.count == Self.frontiers.count })
    }

    @Test func slideKeysAreReleasedExactlyAsTheTableSays() {
        for row in Self.keyTable {
            for (frontier, expected) in zip(Self.frontiers, row.released) {
                let released = ReleasePolicy.releasedSlides(
                    state: row.state, frontier: frontier, slideCount: Self.slideCount, venue: row.venue, allowDownload: row.allowDownload)
                #expect(Self.text(released) == expected, "state \(row.state), frontier \(frontier.map(String.init) ?? "none"), venue \(row.venue), allowDownload \(row.allowDownload)")
            }
        }
    }

    @Test func anEmptyDeckReleasesNothingEvenWhenDownloadable() {
        #expect(ReleasePolicy.releasedSlides(state: .ended, frontier: 3, slideCount: 0, venue: .unlocked, allowDownload: true).isEmpty)
        #expect(ReleasePolicy.releasedSlides(state: .live, frontier: 3, slideCount: 0, venue: .unlocked, allowDownload: false).isEmpty)
    }

    // MARK: - Gated resources

    static let gateFrontiers: [Int?] = [nil, 3, 4, 9]
    static let releaseAt: Int64 = 5000
    static let rules: [String: GateRule] = [
        "after 4": GateRule(releaseAfterSlide: 4),
        "at 5000": GateRule(releaseAt: releaseAt),
        "after 4 and at 5000": GateRule(releaseAfterSlide: 4, releaseAt: releaseAt),
        "no rule": GateRule(),
    ]

    /// `x` = released. Clock "before" is 4999, "at" is 5000.
    static let gateTable: [(rule: String, state: SessionState, clock: String, released: [String])] = [
        //                                                 frontier: none 3    4    9
        ("after 4", .draft, "before", /*                       */ ["", "", "", ""]),
        ("after 4", .draft, "at", /*                           */ ["", "", "", ""]),
        ("after 4", .scheduled, "before", /*                   */ ["", "", "", ""]),
        ("after 4", .scheduled, "at", /*                       */ ["", "", "", ""]),
        ("after 4", .rehearsal, "before", /*                   */ ["", "", "", ""]),
        ("after 4", .rehearsal, "at", /*                       */ ["", "", "", ""]),
        ("after 4", .live, "before", /*                        */ ["", "", "x", "x"]),
        ("after 4", .live, "at", /*                            */ ["", "", "x", "x"]),
        ("after 4", .ended, "before", /*                       */ ["", "", "x", "x"]),
        ("after 4", .ended, "at", /*                           */ ["", "", "x", "x"]),
        ("at 5000", .draft, "before", /*                       */ ["", "", "", ""]),
        ("at 5000", .draft, "at", /*                           */ ["", "", "", ""]),
        ("at 5000", .scheduled, "before", /*                   */ ["", "", "", ""]),
        ("at 5000", .scheduled, "at", /*                       */ ["", "", "", ""]),
        ("at 5000", .rehearsal, "before", /*                   */ ["", "", "", ""]),
        ("at 5000", .rehearsal, "at", /*                       */ ["", "", "", ""]),
        ("at 5000", .live, "before", /*                        */ ["", "", "", ""]),
        ("at 5000", .live, "at", /*                            */ ["x", "x", "x", "x"]),
        ("at 5000", .ended, "before", /*                       */ ["", "", "", ""]),
        ("at 5000", .ended, "at", /*                           */ ["x", "x", "x", "x"]),
        ("after 4 and at 5000", .draft, "before", /*           */ ["", "", "", ""]),
        ("after 4 and at 5000", .draft, "at", /*               */ ["", "", "", ""]),
        ("after 4 and at 5000", .scheduled, "before", /*       */ ["", "", "", ""]),
        ("after 4 and at 5000", .scheduled, "at", /*           */ ["", "", "", ""]),
        ("after 4 and at 5000", .rehearsal, "before", /*       */ ["", "", "", ""]),
        ("after 4 and at 5000", .rehearsal, "at", /*           */ ["", "", "", ""]),
        ("after 4 and at 5000", .live, "before", /*            */ ["", "", "", ""]),
        ("after 4 and at 5000", .live, "at", /*                */ ["", "", "x", "x"]),
        ("after 4 and at 5000", .ended, "before", /*           */ ["", "", "", ""]),
        ("after 4 and at 5000", .ended, "at", /*               */ ["", "", "x", "x"]),
        ("no rule", .draft, "before", /*                       */ ["", "", "", ""]),
        ("no rule", .draft, "at", /*                           */ ["", "", "", ""]),
        ("no rule", .scheduled, "before", /*                   */ ["", "", "", ""]),
        ("no rule", .scheduled, "at", /*                       */ ["", "", "", ""]),
        ("no rule", .rehearsal, "before", /*                   */ ["", "", "", ""]),
        ("no rule", .rehearsal, "at", /*                       */ ["", "", "", ""]),
        ("no rule", .live, "before", /*                        */ ["", "", "", ""]),
        ("no rule", .live, "at", /*                            */ ["", "", "", ""]),
        ("no rule", .ended, "before", /*                       */ ["", "", "", ""]),
        ("no rule", .ended, "at", /*                           */ ["", "", "", ""]),
    ]

    @Test func theGateTableCoversEveryCombinationOnce() {
        let keys = Self.gateTable.map { "\($0.rule) \($0.state) \($0.clock)" }
        #expect(Set(keys).count == keys.count)
        #expect(keys.count == Self.rules.count * SessionState.allCases.count * 2)
    }

    @Test func gatedResourcesAreReleasedExactlyAsTheTableSays() throws {
        for row in Self.gateTable {
            let rule = try #require(Self.rules[row.rule])
            let now = row.clock == "at" ? Self.releaseAt : Self.releaseAt - 1
            for (frontier, expected) in zip(Self.gateFrontiers, row.released) {
                let released = ReleasePolicy.isReleased(rule, state: row.state, frontier: frontier, now: now)
                #expect(released == (expected == "x"), "rule \(row.rule), state \(row.state), clock \(row.clock), frontier \(frontier.map(String.init) ?? "none")")
            }
        }
    }

    @Test func theNextClockChangeIsTheReleaseMomentWhileItIsAhead() {
        #expect(ReleasePolicy.nextClockChange(GateRule(releaseAt: 5000), now: 4999) == 5000)
        #expect(ReleasePolicy.nextClockChange(GateRule(releaseAt: 5000), now: 5000) == nil)
        #expect(ReleasePolicy.nextClockChange(GateRule(releaseAfterSlide: 2), now: 0) == nil)
    }

    // MARK: - Venue check and scope

    @Test func venueCheckUsesTheSessionsNetworks() throws {
        var session = SessionRecord(
            id: "s", state: .live, maxShown: 1, rehearsalMaxShown: nil, allowDownload: false, venueNetworks: [], packageId: TestContent.packageAID, seriesId: nil,
            packageVersion: "", deckVersion: 1, slideCount: 3, changeSequence: 0, updatedAt: 0)
        #expect(session.venueCheck(client: IPAddress("203.0.113.9")) == .unlocked)
        #expect(session.venueCheck(client: nil) == .unlocked)
        session.venueNetworks = [try IPNetwork(parsing: "10.20.0.0/16"), try IPNetwork(parsing: "2001:db8:42::/48")]
        #expect(session.venueCheck(client: IPAddress("10.20.3.4")) == .inside)
        #expect(session.venueCheck(client: IPAddress("::ffff:10.20.3.4")) == .inside)
        #expect(session.venueCheck(client: IPAddress("2001:db8:42:1::5")) == .inside)
        #expect(session.venueCheck(client: IPAddress("10.21.0.1")) == .outside)
        #expect(session.venueCheck(client: IPAddress("2001:db8:43::1")) == .outside)
        #expect(session.venueCheck(client: nil) == .outside)
    }

    @Test func scopesCoverTheirSessionsAndOnlySeriesScopesCoverTheSeriesManifest() {
        let series = DeviceScope.series("conf")
        #expect(series.allows(session: "talk", seriesSessions: ["talk", "lab"]))
        #expect(!series.allows(session: "other", seriesSessions: ["talk", "lab"]))
        #expect(series.allows(series: "conf") && !series.allows(series: "other"))
        let session = DeviceScope.session("talk")
        #expect(session.allows(session: "talk", seriesSessions: []))
        #expect(!session.allows(session: "lab", seriesSessions: ["talk", "lab"]))
        #expect(!session.allows(series: "conf") && !session.allows(series: "talk"))
    }
}
