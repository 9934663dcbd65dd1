import Foundation
import PulseCommandLine
import PulseCore
import PulseTestSupport
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// Issue 11 item 9, the push/gc parts: JSON printed as build, verify and diff print theirs, SI byte
/// units as in pulse-pack's summaries, examples in --help, no raw Foundation messages.
@Suite(.serialized) struct OutputTests {
    @Test func pushAndGcJSONIsIndentedWithSortedKeysLikeTheOtherCommands() throws {
        let package = try TestPackage()
        let temporary = try TestFolder("pulse-json")
        let folder = temporary.url
        try package.publish(slides: ["json slide"])
        let push = runCLI(PushCommand.make, [package.root.path, "--to", folder.path, "--json"])
        #expect(push.code == 0, "\(push.err)")
        let pushText = push.out.joined(separator: "\n")
        // The one printer pulse-pack uses for --json: canonical keys, two-space indent.
        #expect(pushText == String(decoding: try JSONValue.parse(Data(pushText.utf8)).prettyBytes.dropLast(), as: UTF8.self))
        let lines = pushText.split(separator: "\n")
        try #require(lines.count == 6, "\(lines)")
        #expect(lines.first == "{" && lines.last == "}")
        #expect(lines[1].hasPrefix("  \"bytes\": ") && lines[4].hasPrefix("  \"uploaded\": "), "\(lines)")

        let gc = runCLI(GCCommand.make, [folder.path, "--json"])
        #expect(gc.code == 0, "\(gc.err)")
        let gcText = gc.out.joined(separator: "\n")
        #expect(gcText == String(decoding: try JSONValue.parse(Data(gcText.utf8)).prettyBytes.dropLast(), as: UTF8.self))
        let keys = (try JSONSerialization.jsonObject(with: Data(gcText.utf8)) as! [String: Any]).keys.sorted()
        #expect(keys == ["blobs", "bytes", "dryRun", "files", "kept", "keptBlobs", "keptVersions", "temporary", "versions"])
    }

    @Test func bytesUseSIUnitsLikePulsePack() {
        #expect(OpsCommand.byteText(999) == "999 B")
        #expect(OpsCommand.byteText(1_000) == "1.0 KB")
        #expect(OpsCommand.byteText(1_234_567) == "1.2 MB")
        #expect(OpsCommand.byteText(3_000_000_000) == "3.0 GB")
    }

    @Test func helpShowsExamples() {
        for command in [PushCommand.command, GCCommand.command] {
            let help = CommandLineTool.help(for: command, path: ["pulse-pack", command.name])
            #expect(help.contains("EXAMPLES:") && help.contains("pulse-pack \(command.name) "), "\(command.name)")
            #expect(help.contains("--wait"))
        }
    }

    @Test func systemErrorsAreSaidInOurWords() {
        let errors: [(any Error, String)] = [
            (NSError(domain: NSCocoaErrorDomain, code: NSFileWriteVolumeReadOnlyError), "Read-only file system"),
            (NSError(domain: NSCocoaErrorDomain, code: NSFileWriteOutOfSpaceError), "No space left on device"),
            (NSError(domain: NSCocoaErrorDomain, code: 4, userInfo: [NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(EROFS))]),
             "Read-only file system"),
            (URLError(.networkConnectionLost), "connection lost: reset by the server or a proxy"),
            (URLError(.cannotParseResponse), "network error \(URLError.cannotParseResponse.rawValue)"),
        ]
        for (error, expected) in errors {
            let text = OpsError.from(error).description
            #expect(text == expected)
            #expect(!text.contains("could not be completed"))
        }
    }
}
