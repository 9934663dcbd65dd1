import Testing

/// `serve --public-url`: the address the console's enrollment links carry, checked as a link would carry it.
@Suite struct PublicURLOptionTests {
    @Test func helpNamesItAndABadURLIsAUsageError() {
        #expect(CLI.run(["serve", "--help"]).text.contains("--public-url <url>"))
        for (url, reason) in [
            ("sync.example.net", "must start with https:// or http://"),
            ("https://user@sync.example.net", "host"),
            ("https://sync.example.net/?a=1", "path"),
            ("https://sync.example.net:70000", "port"),
        ] {
            let bad = CLI.run(["serve", "--data", "/tmp/pulse-no-such-folder", "--public-url", url])
            #expect(bad.code == 64, "\(url)")
            #expect(bad.err.first?.contains("--public-url \(url): ") == true && bad.err.first?.contains(reason) == true, "\(bad.err)")
        }
    }
}
