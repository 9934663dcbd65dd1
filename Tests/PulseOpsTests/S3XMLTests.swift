import Foundation
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// The strict ListObjectsV2 reader: a whole page parses; anything less is an error, never a shorter list.
struct S3XMLTests {
    static let page = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>media</Name><Prefix>live/</Prefix>\
        <KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated>\
        <Contents><Key>live/a &amp; b.json</Key><LastModified>2026-12-01T15:40:48.250Z</LastModified><ETag>&quot;d41d8cd98f00b204e9800998ecf8427e&quot;</ETag><Size>0</Size><StorageClass>STANDARD</StorageClass></Contents>\
        <Contents><Key>live/assets/ab</Key><LastModified>2026-12-01T15:40:49Z</LastModified><Size>204816</Size><Owner><ID>x</ID></Owner></Contents>\
        <NextContinuationToken>1/abc+=</NextContinuationToken></ListBucketResult>
        """

    @Test func aWholePageParses() throws {
        let page = try S3ListPage(Data(Self.page.utf8))
        #expect(page.objects.map(\.path) == ["live/a & b.json", "live/assets/ab"])
        #expect(page.objects.map(\.size) == [0, 204816])
        #expect(page.objects[0].modified.timeIntervalSince1970 == 1_796_139_648.25)
        #expect(page.isTruncated && page.nextToken == "1/abc+=")
    }

    /// A body cut anywhere (the proxy's "truncate" keeps Content-Length consistent) never parses.
    @Test func everyCutOfAPageIsAnError() {
        let bytes = Array(Self.page.utf8)
        for length in 0..<bytes.count {
            #expect(throws: S3XML.Malformed.self, "cut at \(length)") { try S3ListPage(Data(bytes[..<length])) }
        }
    }

    @Test func incompleteOrInconsistentPagesAreErrors() {
        let cases: [(String, String)] = [
            ("<IsTruncated>true</IsTruncated>", "<IsTruncated>maybe</IsTruncated>"),
            ("<IsTruncated>true</IsTruncated>", ""),
            ("<NextContinuationToken>1/abc+=</NextContinuationToken>", ""),
            ("<KeyCount>2</KeyCount>", "<KeyCount>3</KeyCount>"),
            ("<Size>204816</Size>", ""),
            ("<Size>204816</Size>", "<Size>-1</Size>"),
            ("<LastModified>2026-12-01T15:40:49Z</LastModified>", "<LastModified>yesterday</LastModified>"),
            ("<Key>live/assets/ab</Key>", ""),
            ("</Contents><Contents>", "</Contents><Contents></Contents><Contents>"),
            ("&amp;", "&nbsp;"),
            ("</ListBucketResult>", "</ListBucketResult><extra/>"),
            ("<ListBucketResult", "<Error><Code>Oops</Code></Error><ListBucketResult"),
        ]
        for (original, replacement) in cases {
            let text = Self.page.replacingOccurrences(of: original, with: replacement)
            #expect(text != Self.page, "\(original) is in the page")
            #expect(throws: S3XML.Malformed.self, "\(original) → \(replacement)") { try S3ListPage(Data(text.utf8)) }
        }
        #expect(throws: S3XML.Malformed.self) { try S3ListPage(Data()) }
        #expect(throws: S3XML.Malformed.self) { try S3ListPage(Data("<Error><Code>AccessDenied</Code></Error>".utf8)) }
    }

    @Test func httpDatesAndErrorBodies() {
        #expect(S3XML.httpDate("Tue, 01 Dec 2026 15:40:48 GMT")?.timeIntervalSince1970 == 1_796_139_648)
        let body = S3ErrorBody(Data("<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>a &lt;b&gt;</Message></Error>".utf8))
        #expect(body.code == "NoSuchKey" && body.message == "a <b>")
        #expect(S3ErrorBody(Data("<Error><Code>Cut".utf8)).code == nil)
    }
}
