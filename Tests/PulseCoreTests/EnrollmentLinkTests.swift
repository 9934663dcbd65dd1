import PulseCore
import Testing

/// The enrollment link of docs/console.md: built and read back, and every hostile shape refused with a reason.
@Suite struct EnrollmentLinkTests {
    static let token = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN-_0"

    @Test func deviceCodeAndTokenRoundTrip() throws {
        let code = try EnrollmentLink(server: "https://Sync.Example.net/", credential: .deviceCode("ABCD-EFGH-JKMN"))
        #expect(code.text == "https://sync.example.net/console/enroll#code=ABCD-EFGH-JKMN")
        #expect(try EnrollmentLink(parsing: code.text) == code)

        let link = try EnrollmentLink(server: "http://127.0.0.1:8080/Pulse", credential: .registrationToken(Self.token))
        #expect(link.text == "http://127.0.0.1:8080/Pulse/console/enroll#token=\(Self.token)")
        let read = try EnrollmentLink(parsing: link.text)
        #expect(read.server == "http://127.0.0.1:8080/Pulse")
        #expect(read.credential == .registrationToken(Self.token))
        #expect(read.credential.secret == Self.token)

        let v6 = try EnrollmentLink(parsing: "https://[::1]:8443/console/enroll#code=abcdefghjkmn")
        #expect(v6.server == "https://[::1]:8443")
    }

    @Test func descriptionNeverHoldsTheSecret() throws {
        let link = try EnrollmentLink(server: "https://h.example", credential: .registrationToken(Self.token))
        #expect(!link.description.contains(Self.token))
        #expect(!"\(link)".contains(Self.token))
    }

    @Test(arguments: [
        ("", "empty"),
        ("ftp://h/console/enroll#code=ABCD-EFGH-JKMN", "https:// or http://"),
        ("javascript:alert(1)//console/enroll#code=ABCD-EFGH-JKMN", "https:// or http://"),
        ("pulse://enroll?code=ABCD-EFGH-JKMN", "no #code="),
        ("https://h/console/enroll", "no #code="),
        ("https://h/console/enroll?code=ABCD-EFGH-JKMN", "no #code="),
        ("https://h/console/enroll?x=1#code=ABCD-EFGH-JKMN", "must end in"),
        ("https://h/enroll#code=ABCD-EFGH-JKMN", "must end in"),
        ("/console/enroll#code=ABCD-EFGH-JKMN", "must end in"),
        ("https:///console/enroll#code=ABCD-EFGH-JKMN", "host"),
        ("https://user@h/console/enroll#code=ABCD-EFGH-JKMN", "host"),
        ("https://h:0/console/enroll#code=ABCD-EFGH-JKMN", "port"),
        ("https://h:99999/console/enroll#code=ABCD-EFGH-JKMN", "port"),
        ("https://h:/console/enroll#code=ABCD-EFGH-JKMN", "port is empty"),
        ("https://[zz]/console/enroll#code=ABCD-EFGH-JKMN", "IPv6"),
        ("https://h/../console/enroll#code=ABCD-EFGH-JKMN", "path"),
        ("https://h//console/enroll#code=ABCD-EFGH-JKMN", "path"),
        ("https://h/a%2F/console/enroll#code=ABCD-EFGH-JKMN", "path"),
        ("https://h/console/enroll#code=", "device code"),
        ("https://h/console/enroll#code=ABCD-EFGH-JKM", "device code"),
        ("https://h/console/enroll#code=ABCD-EFGH-JKMNP", "device code"),
        ("https://h/console/enroll#code=ABCD-EFGH-JK<>", "device code"),
        ("https://h/console/enroll#code=ABCD-EFGH-JKMN#x", "device code"),
        ("https://h/console/enroll#token=short", "43 base64url"),
        ("https://h/console/enroll#token=\(String(repeating: "+", count: 43))", "43 base64url"),
        ("https://h/console/enroll#key=ABCD-EFGH-JKMN", "code=… or token=…"),
        ("https://h/console/enroll#ABCD-EFGH-JKMN", "code=… or token=…"),
        ("https://h/console/enroll#code=ABCD EFGH JKMN", "space"),
        ("https://h/console/enroll#code=ABCD-EFGH-JKMN\n", "control"),
        ("https://h\u{00E9}/console/enroll#code=ABCD-EFGH-JKMN", "non-ASCII"),
        ("https://h/\(String(repeating: "a", count: 2000))/console/enroll#code=ABCD-EFGH-JKMN", "more than 1024"),
    ])
    func hostileLinksAreRefusedWithAReason(text: String, reason: String) {
        #expect(EnrollmentLink(text) == nil)
        do {
            _ = try EnrollmentLink(parsing: text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description.contains(reason), "\(text): \(error.description)")
            #expect(!error.description.contains("ABCD-EFGH-JKMN"), "the problem echoes the code")
        }
    }

    @Test func buildRefusesABadServerOrCredential() {
        #expect(throws: EnrollmentLink.Problem.self) { try EnrollmentLink(server: "h.example", credential: .deviceCode("ABCD-EFGH-JKMN")) }
        #expect(throws: EnrollmentLink.Problem.self) { try EnrollmentLink(server: "https://h/?a=1", credential: .deviceCode("ABCD-EFGH-JKMN")) }
        #expect(throws: EnrollmentLink.Problem.self) { try EnrollmentLink(server: "https://h", credential: .deviceCode("x")) }
        #expect(throws: EnrollmentLink.Problem.self) { try EnrollmentLink(server: "https://h", credential: .registrationToken("x")) }
    }
}
