import Foundation
import PulseCore
import PulseCrypto

extension ConformanceRun {
    /// §3: manifests with their ETags and scope, the series manifest, content-addressed immutable assets,
    /// the public app config.
    func contentRules() {
        let target = session.map { "/api/sync/manifest?session=\($0)" }
        if let device, let target, let response = try? signed("GET", target, by: device), response.status == 200, let json = response.json {
            sessionManifest = (response, json)
        }

        rule("manifest.etag") { evidence in
            let (response, json) = try need(sessionManifest, "the session manifest (a device reading its session)")
            let version = json["packageVersion"]?.stringValue
            evidence.add("GET \(target!) → 200, ETag \(response.header("etag") ?? "none"), packageVersion \(version ?? "none")")
            try expect(version != nil, "the manifest has no packageVersion")
            try expect(response.header("etag") == "\"\(version!)\"", "the ETag is not the strong \"<packageVersion>\" of the body")
        }

        rule("manifest.not-modified") { evidence in
            let device = try need(device, "a device")
            let (response, _) = try need(sessionManifest, "the session manifest")
            let etag = try need(response.header("etag"), "an ETag on the manifest")
            for (what, condition, expected) in [
                ("its ETag", etag, 304), ("its weak form", "W/" + etag, 304), ("a list holding it", "\"0000\", " + etag, 304),
                ("another tag", "\"0000\"", 200),
            ] as [(String, String, Int)] {
                let answer = try signed("GET", target!, by: device, headers: [("If-None-Match", condition)])
                evidence.add("If-None-Match: \(what) → \(answer.status)\(answer.status == 304 ? ", \(answer.body.count) body bytes" : "")")
                try expect(answer.status == expected, "If-None-Match with \(what): expected \(expected), got \(answer.status)")
                if expected == 304 { try expect(answer.body.isEmpty, "a 304 with a body") }
            }
        }

        rule("manifest.scope") { evidence in
            let device = try need(device, "a device")
            let session = try need(session, "a session")
            try expect(sessionManifest != nil, "the device could not read session \(session) of its scope")
            evidence.add("\(device.scopeKind)-scoped device reads its session \(session) → 200")
            var refused: [(String, String)] = [("an unknown session", "/api/sync/manifest?session=conformance-none")]
            if device.scopeKind == "session" {
                if let series { refused.append(("its session's series manifest", "/api/sync/series/\(series)/manifest")) }
                if let other = otherSession, other != session { refused.append(("another session (\(other))", "/api/sync/manifest?session=\(other)")) }
            } else if device.scopeKind == "series" {
                let answer = try signed("GET", "/api/sync/series/\(device.scopeId)/manifest", by: device)
                evidence.add("series-scoped device reads its series manifest → \(answer.status)")
                try expect(answer.status == 200, "a series-scoped device could not read its series manifest")
                let listed = Set(answer.json?["sessions"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [])
                if let other = otherSession, !listed.contains(other) { refused.append(("a session outside its series (\(other))", "/api/sync/manifest?session=\(other)")) }
            }
            for (what, path) in refused {
                let answer = try signed("GET", path, by: device)
                evidence.add("\(what) → \(answer.summary)")
                try expect(answer.status == 404, "\(what) was answered \(answer.status), not the flat 404")
            }
        }

        rule("manifest.content") { evidence in
            let (_, json) = try need(sessionManifest, "the session manifest")
            let slides = json["slides"]?.arrayValue ?? []
            try expect(!slides.isEmpty, "the manifest has no slides")
            for (index, slide) in slides.enumerated() {
                try expect(slide["n"]?.intValue == index, "slide \(index) has n \(slide["n"].map { "\($0)" } ?? "none"): slides are numbered from 0 in order")
                try expect(slide["assetHash"]?.stringValue.map(Hex.isDigestName) == true, "slide \(index)'s assetHash is not 64 lowercase hex digits")
                try expect((slide["bytes"]?.intValue ?? -1) > 0, "slide \(index) has no byte count")
            }
            try expect(json["deckVersion"]?.intValue != nil, "the manifest has no deckVersion")
            let timed = Self.paths(json) { key, _ in ["releaseAt", "releaseAfterSlide", "releasedAt", "releaseTime"].contains(key) }
            try expect(timed.isEmpty, "release times in the manifest: \(timed.prefix(3).joined(separator: ", "))")
            let gated = (json["resources"]?.arrayValue ?? []).filter { $0["gated"] == .bool(true) }
            for resource in gated {
                try expect(resource["url"] == nil && resource["body"] == nil, "gated resource \(resource["id"]?.stringValue ?? "?") carries a url or body")
            }
            evidence.add("\(slides.count) slides numbered 0–\(slides.count - 1), deckVersion \(json["deckVersion"]?.intValue ?? 0), "
                + "\(gated.count) gated resources as metadata only, no release time anywhere")
        }

        rule("series.manifest") { evidence in
            let device = try need(seriesDevices.first ?? (device?.scopeKind == "series" ? device : nil), "a series device")
            let path = "/api/sync/series/\(device.scopeId)/manifest"
            let answer = try signed("GET", path, by: device)
            evidence.add("GET \(path) → \(answer.status), ETag \(answer.header("etag") ?? "none")")
            try expect(answer.status == 200, "a series device could not read its series manifest (\(answer.summary))")
            let json = try need(answer.json, "a JSON series manifest")
            let days = json["days"]?.arrayValue
            try expect(days != nil && days!.allSatisfy { $0["date"]?.stringValue != nil && $0["items"]?.arrayValue != nil },
                "days is not [{date, items: […]}]")
            try expect(json["rooms"]?.arrayValue != nil, "no rooms list")
            let refs = json["sessions"]?.arrayValue ?? []
            try expect(!refs.isEmpty, "no session refs to pre-cache")
            if let version = json["packageVersion"]?.stringValue {
                try expect(answer.header("etag") == "\"\(version)\"", "the series ETag is not \"<packageVersion>\"")
            }
            for ref in refs {
                guard let id = ref["id"]?.stringValue, let version = ref["packageVersion"]?.stringValue, ref["title"]?.stringValue != nil else {
                    throw Broken("a session ref is not {id, title, packageVersion}")
                }
                let session = try signed("GET", "/api/sync/manifest?session=\(id)", by: device)
                evidence.add("ref \(id) at \(version.prefix(12))…; its manifest's ETag \(session.header("etag") ?? "none")")
                try expect(session.header("etag") == "\"\(version)\"", "ref \(id) names packageVersion \(version.prefix(12))… but its manifest's ETag is \(session.header("etag") ?? "none")")
            }
            if let etag = answer.header("etag") {
                let again = try signed("GET", path, by: device, headers: [("If-None-Match", etag)])
                evidence.add("If-None-Match: its ETag → \(again.status)")
                try expect(again.status == 304, "the series manifest's ETag did not give a 304")
            }
        }

        rule("asset.content-addressed") { evidence in
            let (_, json) = try need(sessionManifest, "the session manifest")
            let slides = json["slides"]?.arrayValue ?? []
            for slide in slides {
                guard let hash = slide["assetHash"]?.stringValue, let bytes = slide["bytes"]?.intValue else { continue }
                let answer = try assets.get("/api/sync/asset/\(hash)")
                try expect(answer.status == 200, "asset \(hash.prefix(12))… answered \(answer.status)")
                try expect(answer.body.count == bytes, "asset \(hash.prefix(12))… is \(answer.body.count) bytes, the manifest says \(bytes)")
                try expect(SHA256.hex(answer.body) == hash, "asset \(hash.prefix(12))…'s bytes do not hash to its name")
            }
            evidence.add("\(slides.count) slide assets: each 200, the manifest's length, SHA-256 = its name")
            let unknown = SHA256.hex(try SecureRandom.bytes(32))
            let missing = try assets.get("/api/sync/asset/\(unknown)")
            evidence.add("an unknown hash → \(missing.status)")
            try expect(missing.status == 404, "an unknown hash answered \(missing.status)")
        }

        rule("asset.immutable") { evidence in
            let (_, json) = try need(sessionManifest, "the session manifest")
            let hash = try need(json["slides"]?.arrayValue?.first?["assetHash"]?.stringValue, "a slide")
            let answer = try assets.get("/api/sync/asset/\(hash)")
            let control = (answer.header("cache-control") ?? "").lowercased()
            evidence.add("GET /api/sync/asset/\(hash.prefix(12))… → \(answer.status), Cache-Control: \(control.isEmpty ? "(none)" : control)")
            let directives = control.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let maxAge = directives.first { $0.hasPrefix("max-age=") }.flatMap { Int($0.dropFirst(8)) } ?? 0
            try expect(directives.contains("immutable"), "no immutable")
            try expect(maxAge >= 86_400, "max-age \(maxAge) s is shorter than a day")
            try expect(!directives.contains { ["private", "no-store", "no-cache"].contains($0) }, "a shared cache may not keep it")
        }

        rule("appconfig.public") { evidence in
            let org = try need(options.org, "an organisation slug (--org)")
            let answer = try assets.get("/api/sync/appconfig?org=\(org)")
            evidence.add("GET /api/sync/appconfig?org=\(org) without credentials → \(answer.summary)")
            try expect(answer.status == 200, "the app config is not public")
            let json = try need(answer.json, "a JSON app config")
            try expect(json["org"]?.stringValue == org, "org is not \(org)")
            try expect(json["productName"]?.stringValue != nil && json["colors"]?.objectValue != nil && json["theme"]?.stringValue != nil,
                "not {org, productName, colors, theme, …}")
        }
    }

    /// The paths of every key in `value` for which `match` holds.
    static func paths(_ value: JSONValue, prefix: String = "", _ match: (String, JSONValue) -> Bool) -> [String] {
        switch value {
        case let .object(fields):
            return fields.sorted { $0.key < $1.key }.flatMap { key, field in
                (match(key, field) ? [prefix + key] : []) + paths(field, prefix: prefix + key + ".", match)
            }
        case let .array(items):
            return items.enumerated().flatMap { index, item in paths(item, prefix: prefix + "\(index).", match) }
        default:
            return []
        }
    }
}
