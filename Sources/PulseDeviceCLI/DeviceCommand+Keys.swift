import Foundation
import PulseCommandLine
import PulseCore
import PulseDevice
import PulseCrypto
import PulseStore

extension DeviceCommand {
    /// `keys [--session ID] [--json]`
    static let openSlide = Option.int("slide", "<n>", in: 0...1_000_000, help: "The slide, from 0.").required()
    static let openOut = Option.value("out", "<file>", help: "Where to write the plaintext.").required()
    static let diagBuild = Option.value("build", "<version>", help: "The app version (default pulse-device \(ToolVersion.current)).")
    static let diagOffline = Option.flag("offline", help: "Report the device as offline.")
    static let diagRTT = Option.int("rtt-ms", "<ms>", in: 0...600_000, help: "Round-trip time to report.")
    static let diagType = Option.value("effective-type", "<type>", help: "wifi, 4g, … as the web client reports it.")

    static func keysCommand(console: Console) -> Command {
        Command(
            name: "keys",
            abstract: "Fetch the released keys and say which slides they open (the keys stay in memory).",
            discussion: """
                Keys whose deckVersion differs from the cached manifest's are refused: run sync first. The keys
                themselves are never printed or written anywhere.
                """,
            options: [deviceDirOption, sessionOption, serverOption, skewOption, jsonOption],
            validate: validateDevice,
            run: { arguments in
                let context = try Context(arguments)
                defer { context.transport.invalidate() }
                let session = try context.session(arguments)
                let keys = try ReleasedKeys.fetch(session: session, client: context.client, answers: AnswerGuard(folder: context.folder, client: context.client))
                guard let manifest = try context.cache.sessionManifest(session) else {
                    throw DeviceError(.staleDeck, "session \(session) is not cached: run pulse-device sync --session \(session) first")
                }
                try keys.check(against: manifest)
                if arguments[jsonOption] {
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
    static func openCommand(console: Console) -> Command {
        Command(
            name: "open",
            abstract: "Decrypt one released slide in memory and write its plaintext to --out (the only place plaintext goes).",
            discussion: """
                Fetches the released keys, refuses keys for another deckVersion than the cached manifest's, opens the
                cached blob with AES-256-GCM in memory and writes the plaintext (a one-page PDF or an image) to --out,
                mode 0600, atomically. A slide the server has not released is refused (exit 1).
                """,
            examples: ["pulse-device open --device-dir dev1 --session keynote --slide 3 --out slide3.pdf"],
            options: [deviceDirOption, sessionOption, openSlide, openOut, serverOption, skewOption, jsonOption],
            validate: validateDevice,
            run: { arguments in
                let slide = arguments[openSlide], out = arguments[openOut]
                let context = try Context(arguments)
                defer { context.transport.invalidate() }
                let session = try context.session(arguments)
                guard let manifest = try context.cache.sessionManifest(session) else {
                    throw DeviceError(.staleDeck, "session \(session) is not cached: run pulse-device sync --session \(session) first")
                }
                let keys = try ReleasedKeys.fetch(session: session, client: context.client, answers: AnswerGuard(folder: context.folder, client: context.client))
                let plaintext = try keys.open(slide: slide, of: manifest, cache: context.cache)
                let url = URL(fileURLWithPath: out)
                do {
                    try AtomicFile.write(plaintext, to: url, mode: 0o600)
                } catch {
                    throw DeviceError(.storage, "cannot write \(out): \(error)")
                }
                let kind = SlideKind.of(plaintext)
                if arguments[jsonOption] {
                    console.out(line([
                        "session": .string(session), "slide": .int(slide), "deckVersion": .int(keys.deckVersion), "bytes": .int(plaintext.count),
                        "kind": .string(kind.rawValue), "out": .string(url.path),
                    ]))
                } else {
                    console.out("slide \(slide) of session \(session) (deckVersion \(keys.deckVersion)): \(ByteCount.format(plaintext.count)) \(kind) written to \(out)")
                }
                return ExitCode.success
            })
    }

    /// `diag [--session ID] [--build B] [--offline] [--rtt-ms N] [--effective-type T]`
    static func diagCommand(console: Console) -> Command {
        Command(
            name: "diag",
            abstract: "Post a connection sample (POST /api/sessions/{id}/diag), as the app does from the room.",
            options: [deviceDirOption, sessionOption, diagBuild, diagOffline, diagRTT, diagType, serverOption, skewOption],
            validate: validateDevice,
            run: { arguments in
                let context = try Context(arguments)
                defer { context.transport.invalidate() }
                let session = try context.session(arguments)
                var sample: [String: JSONValue] = [
                    "build": .string(arguments[diagBuild] ?? "pulse-device \(ToolVersion.current)"),
                    "platform": .string(context.identity.platform), "online": .bool(!arguments[diagOffline]),
                ]
                if let rtt = arguments[diagRTT] { sample["rttMs"] = .int(rtt) }
                if let type = arguments[diagType] { sample["effectiveType"] = .string(type) }
                let target = "/api/sessions/\(session)/diag"
                let response = try context.client.signed(
                    "POST", target, headers: [("Content-Type", "application/json")], body: JSONValue.object(sample).canonicalBytes)
                guard (200..<300).contains(response.status) else { throw SyncClient.problem(response, "POST \(target)") }
                console.out("sample posted to session \(session) (\(response.status))")
                return ExitCode.success
            })
    }
}
