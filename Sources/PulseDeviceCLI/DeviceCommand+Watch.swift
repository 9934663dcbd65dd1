import Foundation
import PulseCommandLine
import PulseCore
import PulseDevice

extension DeviceCommand {
    /// `watch [--session ID] [--assets-url URL] [--no-sync] [--until-ended] [--json]`
    static let noSync = Option.flag("no-sync", help: "Do not sync when the manifest changes; only report it.")
    static let untilEnded = Option.flag("until-ended", help: "Exit once the session has ended (after fetching its last keys).")

    static func watchCommand(console: Console) -> Command {
        Command(
            name: "watch",
            abstract: "Follow the live session: on every advance fetch the keys, open each newly released slide in memory.",
            discussion: """
                Follows GET /api/sync/events (Server-Sent Events), reconnecting with Last-Event-ID. On each advance or
                state change it fetches the released keys and prints each newly unlocked slide with the time from the
                event reaching the device to the key in hand. On a manifest event naming a version the cache does not
                hold it syncs first (unless --no-sync). Plaintext is never written. --json prints one object per line
                with Unix times (eventAt, keyAt) so that a script can measure advance-to-key itself.
                """,
            examples: ["pulse-device watch --device-dir dev1 --session keynote --assets-url https://cdn.example.net --json --until-ended"],
            options: [deviceDirOption, sessionOption, assetsOption, noSync, untilEnded, serverOption, skewOption, jsonOption],
            validate: validateDevice,
            run: { arguments in
                let context = try Context(arguments, timeout: 60)
                defer { context.transport.invalidate() }
                let session = try context.session(arguments)
                var options = Watcher.Options()
                options.autoSync = !arguments[noSync]
                options.untilEnded = arguments[untilEnded]
                options.assetsBase = try context.assetsBase(arguments)
                let json = arguments[jsonOption]
                if !json { console.err("watching session \(session) as device \(context.identity.deviceId.prefix(8))…; Ctrl-C stops") }
                let watcher = Watcher(session: session, client: context.client, cache: context.cache, options: options) { update in
                    console.out(json ? line(update.json) : update.text)
                }
                try watcher.run(cancellation: Cancellation())
                return ExitCode.success
            })
    }
}

extension WatchUpdate {
    var json: JSONValue {
        func time(_ seconds: Double) -> JSONValue { .double((seconds * 1000).rounded() / 1000) }
        switch self {
        case let .connected(attempt): return ["type": "connected", "attempt": .int(attempt), "at": time(Date().timeIntervalSince1970)]
        case let .state(state, allowDownload, at): return ["type": "state", "state": .string(state), "allowDownload": .bool(allowDownload), "at": time(at)]
        case let .advance(maxShown, deckVersion, at): return ["type": "advance", "maxShown": .int(maxShown), "deckVersion": .int(deckVersion), "at": time(at)]
        case let .manifest(version, changed, at): return ["type": "manifest", "packageVersion": .string(version), "changed": .bool(changed), "at": time(at)]
        case let .synced(report):
            var fields = report.json.objectValue ?? [:]
            fields["type"] = "synced"
            return .object(fields)
        case let .keys(deckVersion, released, eventAt, keyAt):
            return ["type": "keys", "deckVersion": .int(deckVersion), "released": .array(released.map { .int($0) }), "eventAt": time(eventAt),
                    "keyAt": time(keyAt), "eventToKeyMs": .double(((keyAt - eventAt) * 10_000).rounded() / 10)]
        case let .unlocked(slide, deckVersion, bytes, kind, eventAt, keyAt):
            return ["type": "unlocked", "slide": .int(slide), "deckVersion": .int(deckVersion), "bytes": .int(bytes), "kind": .string(kind.rawValue),
                    "eventAt": time(eventAt), "keyAt": time(keyAt), "eventToKeyMs": .double(((keyAt - eventAt) * 10_000).rounded() / 10)]
        case let .problem(text): return ["type": "problem", "message": .string(text)]
        case let .disconnected(reason, retry): return ["type": "disconnected", "reason": .string(reason), "retryAfter": .double(retry)]
        }
    }

    var text: String {
        switch self {
        case let .connected(attempt): return attempt == 1 ? "connected" : "connected again (attempt \(attempt))"
        case let .state(state, allowDownload, _): return "state \(state)\(allowDownload ? " (download allowed)" : "")"
        case let .advance(maxShown, deckVersion, _): return "advance: the presenter is on slide \(maxShown) (deckVersion \(deckVersion))"
        case let .manifest(version, changed, _): return "manifest \(version.prefix(12))…\(changed ? " (changed)" : "")"
        case let .synced(report): return report.textLines.joined(separator: "\n")
        case let .keys(deckVersion, released, eventAt, keyAt):
            return "keys: \(ReleasedKeys.describe(released)) released (deckVersion \(deckVersion)), in hand \(DeviceCommand.milliseconds(keyAt - eventAt)) after the event"
        case let .unlocked(slide, _, bytes, kind, eventAt, keyAt):
            return "slide \(slide) unlocked: \(ByteCount.format(bytes)) \(kind), key in hand \(DeviceCommand.milliseconds(keyAt - eventAt)) after the event reached the device"
        case let .problem(text): return "problem: \(text)"
        case let .disconnected(reason, retry): return "disconnected (\(reason)); reconnecting in \(String(format: "%.1f", retry)) s"
        }
    }
}
