import Foundation
import PulseCommandLine
import PulseCore
import PulseCrypto
import PulseStore

extension DeviceCommand {
    /// `keys [--session ID] [--json]`
    static func keysCommand(console: DeviceConsole) -> Command {
        Command(
            name: "keys",
            abstract: "Fetch the released keys and say which slides they open (the keys stay in memory).",
            discussion: """
                Keys whose deckVersion differs from the cached manifest's are refused: run sync first. The keys
                themselves are never printed or written anywhere.
                """,
            options: [deviceDirOption, sessionOption, serverOption, skewOption, jsonOption],
            run: { arguments in
                let context = try Context(arguments)
                defer { context.transport.invalidate() }
                let session = try context.session(arguments)
                let keys = try ReleasedKeys.fetch(session: session, client: context.client)
                guard let manifest = try context.cache.sessionManifest(session) else {
                    throw DeviceError(.staleDeck, "session \(session) is not cached: run pulse-device sync --session \(session) first")
                }
                try keys.check(against: manifest)
                if arguments.legacyFlag("json") {
                    console.out(line([
                        "session": .string(session), "deckVersion": .int(keys.deckVersion), "slides": .int(manifest.slides.count),
                        "released": .array(keys.slides.map { .int($0) }),
                    ]))
                } else {
                    console.out("session \(session), deckVersion \(keys.deckVersion): \(ReleasedKeys.describe(keys.slides)) of \(manifest.slides.count) released")
                }
                return ExitCode.success
            })
    }

    /// `open [--session ID] --slide N --out FILE`
    static func openCommand(console: DeviceConsole) -> Command {
        Command(
            name: "open",
            abstract: "Decrypt one released slide in memory and write its plaintext to --out (the only place plaintext goes).",
            discussion: """
                Fetches the released keys, refuses keys for another deckVersion than the cached manifest's, opens the
                cached blob with AES-256-GCM in memory and writes the plaintext (a one-page PDF or an image) to --out,
                mode 0600, atomically. A slide the server has not released is refused (exit 1).
                """,
            examples: ["pulse-device open --device-dir dev1 --session keynote --slide 3 --out slide3.pdf"],
            options: [
                deviceDirOption, sessionOption, .value("slide", "<n>", help: "The slide, from 0."),
                .value("out", "<file>", help: "Where to write the plaintext."), serverOption, skewOption, jsonOption,
            ],
            run: { arguments in
                guard let slide = try arguments.legacyInt("slide", in: 0...1_000_000) else { throw UsageError("missing --slide <n>") }
                guard let out = arguments.legacyValue("out") else { throw UsageError("missing --out <file>") }
                let context = try Context(arguments)
                defer { context.transport.invalidate() }
                let session = try context.session(arguments)
                guard let manifest = try context.cache.sessionManifest(session) else {
                    throw DeviceError(.staleDeck, "session \(session) is not cached: run pulse-device sync --session \(session) first")
                }
                let keys = try ReleasedKeys.fetch(session: session, client: context.client)
                let plaintext = try keys.open(slide: slide, of: manifest, cache: context.cache)
                let url = URL(fileURLWithPath: out)
                do {
                    try AtomicFile.write(plaintext, to: url, mode: 0o600)
                } catch {
                    throw DeviceError(.storage, "cannot write \(out): \(error)")
                }
                let kind = SlideKind.of(plaintext)
                if arguments.legacyFlag("json") {
                    console.out(line([
                        "session": .string(session), "slide": .int(slide), "deckVersion": .int(keys.deckVersion), "bytes": .int(plaintext.count),
                        "kind": .string(kind), "out": .string(url.path),
                    ]))
                } else {
                    console.out("slide \(slide) of session \(session) (deckVersion \(keys.deckVersion)): \(ByteCount.format(plaintext.count)) \(kind) written to \(out)")
                }
                return ExitCode.success
            })
    }

    /// `diag [--session ID] [--build B] [--offline] [--rtt-ms N] [--effective-type T]`
    static func diagCommand(console: DeviceConsole) -> Command {
        Command(
            name: "diag",
            abstract: "Post a connection sample (POST /api/sessions/{id}/diag), as the app does from the room.",
            options: [
                deviceDirOption, sessionOption, .value("build", "<version>", help: "The app version (default pulse-device \(ToolVersion.current))."),
                .flag("offline", help: "Report the device as offline."), .value("rtt-ms", "<ms>", help: "Round-trip time to report."),
                .value("effective-type", "<type>", help: "wifi, 4g, … as the web client reports it."), serverOption, skewOption,
            ],
            run: { arguments in
                let context = try Context(arguments)
                defer { context.transport.invalidate() }
                let session = try context.session(arguments)
                var sample: [String: JSONValue] = [
                    "build": .string(arguments.legacyValue("build") ?? "pulse-device \(ToolVersion.current)"),
                    "platform": .string(context.identity.platform), "online": .bool(!arguments.legacyFlag("offline")),
                ]
                if let rtt = try arguments.legacyInt("rtt-ms", in: 0...600_000) { sample["rttMs"] = .int(rtt) }
                if let type = arguments.legacyValue("effective-type") { sample["effectiveType"] = .string(type) }
                let target = "/api/sessions/\(session)/diag"
                let response = try context.client.signed(
                    "POST", target, headers: [("Content-Type", "application/json")], body: JSONValue.object(sample).canonicalBytes)
                guard (200..<300).contains(response.status) else { throw SyncClient.problem(response, "POST \(target)") }
                console.out("sample posted to session \(session) (\(response.status))")
                return ExitCode.success
            })
    }
}
