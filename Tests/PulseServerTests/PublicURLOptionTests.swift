import Testing

/// `serve --public-url`: the address the console's enrollment links carry, checked as a link would carry it.
@Suite struct PublicURLOptionTests {
    @Test func helpNamesItAndABadURLIsAUsageError() {
        #expect(CLI.run(["serve", "--help"]).text.contains("--public-url <url>"))
        // What an enrollment link could not carry is refused at start (EnrollmentLink.server).
        for url in [
            "sync.example.net", "https://user@sync.example.net", "https://sync.example.net/?a=1", "https://sync.example.net:70000",
            "https://sync.example.net/a%2F", "https://sync.example.net/../x",
        ] {
            let bad = CLI.run(["serve", "--data", "/tmp/pulse-no-such-folder", "--public-url", url])
            #expect(bad.code == 64, "\(url)")
            #expect(bad.err.first?.contains("--public-url") == true, "\(bad.err)")
        }
    }
}
