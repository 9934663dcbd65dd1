import Foundation
import PulseCrypto
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// The S3 client against moto with signature checking on.
@Suite(.serialized) struct S3ClientTests {
    @Test func putHeadGetListDelete() throws {
        let moto = try MotoServer.require()
        let client = moto.client(bucket: try moto.makeBucket())
        let body = Data("hello blob".utf8)
        #expect(try client.head("assets/x") == nil)
        try client.put("assets/x", body: body, contentType: "application/octet-stream", cacheControl: "public, max-age=31536000, immutable")
        #expect(try client.head("assets/x") == body.count)
        #expect(try client.get("assets/x") == body)
        try client.put("a b/ü+%.json", body: Data("{}".utf8), contentType: "application/json", cacheControl: "no-cache")
        #expect(try client.list(prefix: "").map(\.path).sorted() == ["a b/ü+%.json", "assets/x"])
        #expect(try client.list(prefix: "assets/").map(\.path) == ["assets/x"])
        try client.delete("assets/x")
        #expect(try client.head("assets/x") == nil)
    }

    @Test func storesCacheControlAndChecksum() throws {
        let moto = try MotoServer.require()
        let bucket = try moto.makeBucket()
        let client = moto.client(bucket: bucket)
        let body = Data("immutable".utf8)
        try client.put("assets/y", body: body, contentType: "application/octet-stream", cacheControl: "public, max-age=31536000, immutable")
        var request = try client.request("HEAD", key: "assets/y", query: [], body: Data(), headers: [("x-amz-checksum-mode", "ENABLED")], payloadHash: nil)
        request.httpMethod = "HEAD"
        let response = try client.http.send(request)
        #expect(response.status == 200)
        #expect(response.headers["cache-control"] == "public, max-age=31536000, immutable")
        #expect(response.headers["content-type"] == "application/octet-stream")
        #expect(response.headers["x-amz-checksum-sha256"] == Data(PulseCrypto.SHA256.hash(body)).base64EncodedString())
    }

    @Test func listingFollowsContinuationTokens() throws {
        let moto = try MotoServer.require()
        let client = moto.client(bucket: try moto.makeBucket())
        for n in 0..<5 { try client.put("k/\(n)", body: Data([UInt8(n)]), contentType: "application/octet-stream", cacheControl: "no-cache") }
        #expect(try client.list(prefix: "k/", maxKeys: 2).map(\.path) == (0..<5).map { "k/\($0)" })
    }

    @Test func aWrongSecretIsRejected() throws {
        let moto = try MotoServer.require()
        let bucket = try moto.makeBucket()
        var wrong = moto.credentials
        wrong.secretAccessKey = String(wrong.secretAccessKey.dropLast()) + (wrong.secretAccessKey.hasSuffix("A") ? "B" : "A")
        let client = moto.client(bucket: bucket, credentials: wrong)
        #expect {
            try client.put("assets/z", body: Data("x".utf8), contentType: "application/octet-stream", cacheControl: "no-cache")
        } throws: { error in
            let error = error as? OpsError
            return error?.kind == .failure && error!.description.contains("SignatureDoesNotMatch")
                && !error!.description.contains(wrong.secretAccessKey)
        }
        // And the right key on the same bucket works, so it was the signature that failed.
        #expect(try moto.client(bucket: bucket).head("assets/z") == nil)
    }

    @Test func anUnknownAccessKeyIsRejected() throws {
        let moto = try MotoServer.require()
        let client = moto.client(bucket: try moto.makeBucket(), credentials: AWSCredentials(accessKeyId: "AKIAUNKNOWN0000000", secretAccessKey: "x"))
        #expect(throws: OpsError.self) { try client.checkBucket() }
    }
}
