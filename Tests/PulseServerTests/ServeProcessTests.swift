import Foundation
import PulseCore
import PulseCrypto
import PulsePack
import PulseSystem
import PulseTestSupport
import SyncTestSupport
import Synchronization
import Testing
@testable import PulseServer
@testable import PulseServerStorage

/// `pulse-server serve` as operators run it: the real executable, real signals, a real package.
@Suite(.serialized) struct ServeProcessTests {
    /// The bundled samples built by the real packager (plain key tables), in `folder/pkg`.
    static func samplePackage(in folder: TestFolder) throws -> URL {
        let package = folder.url.appendingPathComponent("pkg")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = folder.url.appendingPathComponent("config").path
        environment["PULSE_PACKAGE_SECRET"] = nil
        let options = Builder.Options(
            input: PackagerImportTests.samples.appendingPathComponent("series.json"), output: package,
            secretFile: folder.url.appendingPathComponent("secret.b64"), environment: environment)
        _ = try Builder(options: options).run()
        return package
    }

    /// Import, enroll, go live, advance, fetch keys, decrypt the released slides from the same box
    /// (`--public`); SIGTERM ends the event stream cleanly; a restart keeps the device, the state and
    /// the frontier; and no code, token, key or signature is in the access log or the server's output.
    @Test func aWholeEventOnTheRealExecutable() throws {
        let folder = try TestFolder()
        let package = try Self.samplePackage(in: folder)
        let data = folder.url.appendingPathComponent("data").path
        #expect(CLI.run(["import", "--data", data, package.path]).code == 0)
        let log = folder.url.appendingPathComponent("access.log").path
        var secrets: [String] = []
        let staff = try #require(CLI.run(["admin", "staff-token", "create", "--data", data]).out.first)
        let code = try #require(CLI.run(["admin", "device-code", "create", "--data", data, "--series", "devconf-2026"]).out.first)
        let registration = try #require(CLI.run(["admin", "registration-token", "create", "--data", data, "--series", "devconf-2026"]).out.first)
        secrets += [staff, code, code.replacingOccurrences(of: "-", with: ""), registration]

        var server = try ServerProcess(data: data, ["--public", package.path, "--access-log", log])
        let auth = [("Authorization", "Bearer \(staff)")]
        let key = try P256.PrivateKey()
        let enrolled = try server.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: key))
        #expect(enrolled.status == 200)
        let device = TestDevice(id: try #require(enrolled.json?["deviceId"]?.stringValue), key: key)
        _ = try #require(try server.client().request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: registration, key: try P256.PrivateKey())).json?["deviceId"])
        var signatures: [String] = []
        func signed(_ target: String, body: [UInt8] = []) throws -> RawHTTPResponse {
            let method = body.isEmpty ? "GET" : "POST"
            let header = try device.header(method, target, body: body.isEmpty ? nil : body, at: Int64(Date().timeIntervalSince1970))
            signatures.append(String(header.split(separator: "=").last!))
            return try server.client().request(method, target, [("X-Pulse-Device", header)], body: body)
        }
        let manifest = try #require(try signed("/api/sync/manifest?session=keynote").json)
        let slides = try #require(manifest["slides"]?.arrayValue)
        #expect(try signed("/api/sync/keys?session=keynote").json?["released"] == [])

        // Live, the presenter advances to slide 2; the stream hears it; keys 0…2 open their slides.
        #expect(try server.client().request("POST", "/api/staff/sessions/keynote", auth, body: Array(#"{"state":"live"}"#.utf8)).status == 200)
        let target = "/api/sync/events?session=keynote"
        let stream = try server.client()
        try stream.send("GET \(target) HTTP/1.1\r\nHost: x\r\nX-Pulse-Device: \(try device.header("GET", target, at: Int64(Date().timeIntervalSince1970)))\r\n\r\n")
        #expect(try stream.readHead().status == 200)
        _ = try stream.readChunk()  // retry and snapshot
        #expect(try server.client().request("POST", "/api/staff/sessions/keynote/advance", auth, body: Array(#"{"maxShown":2}"#.utf8)).status == 200)
        let event = String(decoding: try #require(try stream.readChunk()), as: UTF8.self)
        #expect(event.contains("event: advance\ndata: {\"deckVersion\":1,\"maxShown\":2}"))
        let keys = try #require(try signed("/api/sync/keys?session=keynote").json?["released"]?.arrayValue)
        #expect(keys.count == 3)
        for (index, slide) in slides.enumerated() {
            let hash = try #require(slide["assetHash"]?.stringValue)
            let asset = try server.client().request("GET", "/api/sync/asset/\(hash)")
            #expect(asset.status == 200 && asset.header("cache-control")?.contains("immutable") == true)
            if index < keys.count {
                let slideKey = try #require(Data(base64Encoded: keys[index]["keyB64"]?.stringValue ?? ""))
                let nonce = try #require(Data(base64Encoded: keys[index]["nonceB64"]?.stringValue ?? ""))
                let plaintext = try AES256GCM.open(asset.body, key: Array(slideKey), nonce: Array(nonce))
                #expect(plaintext.starts(with: Array("%PDF".utf8)) || plaintext.starts(with: [0x89, 0x50, 0x4e, 0x47]))
                secrets += [keys[index]["keyB64"]?.stringValue ?? "", keys[index]["nonceB64"]?.stringValue ?? ""]
            }
        }
        #expect(try signed("/api/sessions/keynote/diag", body: Array(#"{"build":"1.0.0","platform":"ios","online":true}"#.utf8)).status == 204)
        let appconfigs = try server.client().request("GET", "/api/sync/appconfig?org=devconf")
        #expect(appconfigs.status == 200 || appconfigs.status == 404)

        // SIGTERM: the stream ends with the last chunk, the process exits 0.
        server.signal(SIGTERM)
        #expect(try stream.readChunk() == nil)
        #expect(server.waitForExit(within: 10) == 0)
        #expect(server.errorLines.contains { $0.contains("SIGTERM: closing 1 event streams") })
        #expect(server.errorLines.last == "pulse-server: stopped")
        let firstRun = server.errorLines

        // A restart keeps the device, the state and the frontier.
        server = try ServerProcess(data: data, ["--access-log", log])
        #expect(try signed("/api/sync/keys?session=keynote").json?["released"]?.arrayValue?.count == 3)
        let session = try server.client().request("GET", "/api/staff/sessions/keynote", auth)
        #expect(session.json?["state"] == "live" && session.json?["maxShown"] == 2)
        server.signal(SIGTERM)
        #expect(server.waitForExit(within: 10) == 0)

        // Nothing secret in any log line.
        let logged = (try String(contentsOfFile: log, encoding: .utf8)) + (firstRun + server.errorLines).joined(separator: "\n")
        #expect(logged.contains("/api/sync/keys?session=keynote 200"))
        let pem = String(decoding: try key.pemRepresentation().withUnsafeBytes { Array($0) }, as: UTF8.self)
        secrets += signatures + pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init)
        for secret in secrets where secret.count >= 12 {
            #expect(!logged.contains(secret), "a secret is in the logs: \(secret.prefix(6))…")
        }
    }

    /// Issue 17, item 1, on the real executable: the probe's header (`ts` of 20 digits, no credential
    /// needed) once killed the process with a runtime trap on any device route (and, with the default
    /// backtracer, stalled every connection for ~30 s first). Now each route answers the flat 404 and the
    /// process keeps serving.
    @Test func theProbesOneRequestNoLongerKillsTheServer() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let server = try ServerProcess(data: data, ["--access-log", "off"])
        let header = ("X-Pulse-Device", "00000000000000000000000000000000;ts=99999999999999999999;sig=AAAA")
        for (method, target) in [
            ("GET", "/api/sync/keys?session=keynote"), ("GET", "/api/sync/manifest?session=keynote"), ("GET", "/api/sync/events?session=keynote"),
            ("GET", "/api/sync/series/x/manifest"), ("POST", "/api/sessions/keynote/diag"),
        ] {
            let response = try server.client(timeout: 5).request(method, target, [header], body: method == "POST" ? [0x7b, 0x7d] : [])
            #expect(response.status == 404 && response.json == ["error": "notFound"], "\(method) \(target): \(response.status)")
        }
        #expect(try server.client(timeout: 5).request("GET", "/healthz").status == 200)
        #expect(server.process.isRunning)
    }

    /// Issue 17, item 1 (crash policy): a server killed with SIGKILL in the middle of writes (enrollments,
    /// advances, diag samples, each answered once committed) starts again on its data folder with the same
    /// command and no manual step: the WAL left behind is recovered on open, the folder check passes, every
    /// answered write is there, and it serves at once.
    @Test func aServerKilledWithSIGKILLStartsAgainOnItsDataFolder() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let dataFolder = try DataFolder.prepare(data)
        let codes = try {
            let storage = try dataFolder.openStorage(connections: 2)
            try TestContent.seed(storage, "talk", state: .live)
            return try (0..<1200).map { _ in try Administration(storage: storage).createDeviceCode(scope: .session("talk")).text }
        }()
        let staff = try #require(CLI.run(["admin", "staff-token", "create", "--data", data]).out.first)
        let arguments = ["--access-log", "off", "--enroll-rate", "100000", "--enroll-burst", "100000"]
        var server = try ServerProcess(data: data, arguments)
        let auth = [("Authorization", "Bearer \(staff)")]
        #expect(try server.client().request("POST", "/api/staff/sessions/talk/advance", auth, body: Array(#"{"maxShown":1}"#.utf8)).status == 200)
        // Writes from four clients until the kill; each answered one is remembered.
        let answered = Lines()
        let killed = Mutex(false)
        let running = server
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for step in 0..<400 {
                if killed.withLock({ $0 }) { return }
                let key = try? P256.PrivateKey()
                let response: RawHTTPResponse?
                if worker == 0 {
                    response = try? running.client(timeout: 5).request(
                        "POST", "/api/staff/sessions/talk/advance", auth, body: Array(#"{"maxShown":\#(2 + step)}"#.utf8))
                    if response?.status == 200 { answered.add(out: "advance \(2 + step)") }
                } else {
                    let code = codes[(worker - 1) * 400 + step]
                    response = try? running.client(timeout: 5).request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: key!))
                    if response?.status == 200, let id = response?.json?["deviceId"]?.stringValue { answered.add(out: "device \(id)") }
                }
                killed.withLock { done in
                    // Enough answered writes of both kinds: under load the advances alone can reach 60 first.
                    if !done && answered.out.count >= 60 && answered.out.count(where: { $0.hasPrefix("device ") }) >= 10 {
                        done = true
                        running.signal(SIGKILL)
                    }
                }
            }
        }
        #expect(server.waitForExit(within: 5) != nil)
        #expect(killed.withLock { $0 })
        #expect(FileManager.default.fileExists(atPath: data + "/pulse-server.sqlite-wal"))

        // The same command again: it starts, serves, and holds every answered write.
        server = try ServerProcess(data: data, arguments)
        #expect(try server.client().request("GET", "/healthz").status == 200)
        let devices = Set(try #require(try server.client().request("GET", "/api/staff/devices", auth).json?.arrayValue).compactMap { $0["id"]?.stringValue })
        let session = try server.client().request("GET", "/api/staff/sessions/talk", auth).json
        let highest = answered.out.compactMap { $0.hasPrefix("advance ") ? Int($0.dropFirst(8)) : nil }.max() ?? 1
        #expect((session?["maxShown"]?.intValue ?? -1) >= min(highest, 9), "frontier \(String(describing: session?["maxShown"])) after answered advances up to \(highest)")
        for line in answered.out where line.hasPrefix("device ") {
            #expect(devices.contains(String(line.dropFirst(7))), "answered \(line) is missing after the restart")
        }
        let device = try #require(answered.out.first { $0.hasPrefix("device ") }).dropFirst(7)
        #expect(devices.contains(String(device)))
        #expect(try server.client().request("POST", "/api/staff/sessions/talk/advance", auth, body: Array(#"{"maxShown":9}"#.utf8)).status == 200)
        server.signal(SIGTERM)
        #expect(server.waitForExit(within: 10) == 0)
        try KillDuringEnrollTests.checkConsistent(dataFolder.databasePath)
    }

    /// Log rotation: the file is moved away, SIGHUP (or SIGUSR1) opens a new one; SIGUSR2 is ignored.
    @Test func signalsReopenTheAccessLog() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let log = folder.url.appendingPathComponent("access.log").path
        let server = try ServerProcess(data: data, ["--access-log", log])
        for (signal, name) in [(SIGHUP, "SIGHUP"), (SIGUSR1, "SIGUSR1")] {
            #expect(rename(log, log + ".old") == 0)
            server.signal(signal)
            #expect(server.waitForLine("\(name): access log \(log) reopened"))
            #expect(try server.client().request("GET", "/api/sync/time?\(name)").status == 200)
            #expect(eventually(within: 2) { (try? String(contentsOfFile: log, encoding: .utf8))?.contains("/api/sync/time?\(name) 200") == true })
        }
        server.signal(SIGUSR2)
        #expect(server.waitForLine("SIGUSR2: ignored"))
        #expect(try server.client().request("GET", "/healthz").status == 200)
        server.signal(SIGQUIT)
        #expect(server.waitForExit(within: 10) == 0)
    }

    @Test func aLooseDataFolderRefusesToStart() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        _ = try DataFolder.prepare(data)
        chmod(data, 0o755)
        let server = try ServerProcess(data: data, waitForStart: false)
        #expect(server.waitForExit(within: 10) == 1)
        #expect(server.errorLines == ["pulse-server: error: \(data) is open to group or others (mode 0755); refusing to start: run chmod 700 \(data)"])
    }

    /// A client trickling its headers is cut at the header deadline; others are served meanwhile.
    @Test func slowClientsAreCutAndOthersServed() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let server = try ServerProcess(data: data, ["--header-timeout", "1", "--access-log", "off"])
        let slow = try (0..<4).map { _ in try server.client(timeout: 5) }
        for client in slow { try client.send("GET /api/sync/time HTTP/1.1\r\nHost: x\r\n") }
        let started = Date()
        var cut = 0
        while Date().timeIntervalSince(started) < 4 && cut < slow.count {
            for client in slow { try? client.send("X-Slow: 1\r\n") }
            #expect(try server.client().request("GET", "/api/sync/time").status == 200)
            usleep(200_000)
            cut = slow.filter { (try? $0.send("X")) == nil || $0.isClosedByPeer() }.count
        }
        #expect(cut == slow.count, "the slow clients were not cut within 4 s")
        // A body that never arrives in full is cut too.
        let body = try server.client(timeout: 5)
        try body.send("POST /api/sync/enroll HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        #expect(body.closesWithinTimeout())
    }

    /// kill -9 in the middle of a burst of enrollments over HTTP, three times: the database is consistent,
    /// no device code enrolled two devices, and every enrollment the server answered is there.
    @Test func aKillDuringABurstOfEnrolls() throws {
        let folder = try TestFolder()
        let data = folder.url.appendingPathComponent("data").path
        let dataFolder = try DataFolder.prepare(data)
        do {
            let storage = try dataFolder.openStorage(connections: 2)
            try TestContent.seed(storage, "talk")
        }
        var answered: [String: String] = [:]  // device id → code
        for round in 0..<3 {
            let codes = try {
                let administration = Administration(storage: try dataFolder.openStorage(connections: 2))
                return try (0..<200).map { _ in try administration.createDeviceCode(scope: .session("talk")).text }
            }()
            let server = try ServerProcess(data: data, ["--access-log", "off", "--enroll-rate", "100000", "--enroll-burst", "100000"])
            let results = Lines()
            let killAfter = Int.random(in: 20...120)
            let attempts = codes + codes.reversed()
            let killed = Mutex(false)
            DispatchQueue.concurrentPerform(iterations: 8) { worker in
                for index in stride(from: worker, to: attempts.count, by: 8) {
                    let code = attempts[index]
                    guard let response = try? server.client(timeout: 5).request("POST", "/api/sync/enroll", body: TestDevice.enrollBody(token: code, key: try P256.PrivateKey())) else {
                        if killed.withLock({ $0 }) { return }
                        continue
                    }
                    if response.status == 200, let id = response.json?["deviceId"]?.stringValue { results.add(out: "\(id) \(code)") }
                    killed.withLock { didKill in
                        if !didKill && results.out.count >= killAfter {
                            didKill = true
                            server.signal(SIGKILL)
                        }
                    }
                }
            }
            #expect(server.waitForExit(within: 5) != nil)
            #expect(killed.withLock { $0 }, "round \(round): the burst ended before the kill")
            for line in results.out {
                let parts = line.split(separator: " ").map(String.init)
                #expect(answered[parts[0]] == nil)
                answered[parts[0]] = parts[1]
            }
            try KillDuringEnrollTests.checkConsistent(dataFolder.databasePath)
        }
        let storage = try dataFolder.openStorage(connections: 2)
        #expect(Set(answered.values).count == answered.count, "a code was answered twice")
        for (id, code) in answered {
            let device = try #require(try storage.device(id: id), "answered device \(id) is missing")
            #expect(device.credentialId == CredentialSecret.listingId(hash: CredentialSecret.hash(code)!))
        }
        #expect(answered.count >= 60)
    }

    @Test func serveHasHelpAndRefusesBadArguments() {
        let help = CLI.run(["serve", "--help"])
        #expect(help.code == 0 && help.text.contains("--trusted-proxy") && help.text.contains("--public"))
        let bad = CLI.run(["serve", "--data", "/tmp/x", "--trusted-proxy", "10.1.2.3/8"])
        #expect(bad.code == 64 && bad.err.first?.contains("host bits set") == true)
        #expect(CLI.run(["serve"]).code == 64)
    }
}
