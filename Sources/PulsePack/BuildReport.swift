import Foundation
import PulseCore

/// What a build did, for the human summary and `--json`.
public struct BuildReport: Sendable {
    public struct Session: Sendable {
        public var id: String
        public var deck: String
        public var deckKind: DeckKind
        public var slides: Int
        /// Total ciphertext bytes of the deck.
        public var bytes: Int
        public var newBlobs: Int
        public var reusedBlobs: Int
        public var deckVersion: Int
        public var packageVersion: String
        /// False when the manifest is the one already published (a 304 for the app).
        public var changed: Bool
        public var manifestPath: String
        public var keyTablePath: String
        /// An image folder's slide files in slide order (natural order of their names); nil for a PDF.
        public var slideFiles: [String]?
        /// Files of the image folder left out as junk (`.DS_Store`, `Thumbs.db`, …).
        public var ignoredFiles: [String] = []
    }

    public struct Document: Sendable {
        public var kind: DocumentKind
        public var id: String
        public var packageVersion: String
        public var changed: Bool
    }

    public var package: String
    public var sessions: [Session] = []
    public var documents: [Document] = []
    public var newImages = 0
    public var reusedImages = 0
    /// Bytes of all public images (photos, logos) the manifests name: what every phone downloads besides slides.
    public var imageBytes = 0
    /// The largest public image: its file and bytes.
    public var largestImage: (path: String, bytes: Int)?
    public var seconds: Double = 0
    public var warnings: [String] = []
    /// Where the package secret came from (a file path or `$PULSE_PACKAGE_SECRET`), and whether this build made it.
    public var secret = ""
    public var secretCreated = false
    /// The package id, if this build moved a pulse-package/1 folder to the current layout.
    public var migrated: PackageID?

    public var json: JSONValue {
        .object([
            "package": .string(package),
            "secret": .string(secret), "secretCreated": .bool(secretCreated),
            "migrated": migrated.map { .string($0.hex) } ?? .null,
            "seconds": .double((seconds * 1000).rounded() / 1000),
            "sessions": .array(sessions.map { session in
                [
                    "id": .string(session.id), "deck": .string(session.deck), "deckKind": .string(session.deckKind.rawValue),
                    "slides": .int(session.slides), "bytes": .int(session.bytes),
                    "newBlobs": .int(session.newBlobs), "reusedBlobs": .int(session.reusedBlobs),
                    "deckVersion": .int(session.deckVersion), "packageVersion": .string(session.packageVersion),
                    "changed": .bool(session.changed), "manifest": .string(session.manifestPath),
                    "keyTable": .string(session.keyTablePath),
                    "slideFiles": session.slideFiles.map { .array($0.map(JSONValue.string)) } ?? .null,
                    "ignoredFiles": .array(session.ignoredFiles.map(JSONValue.string)),
                ]
            }),
            "documents": .array(documents.map { document in
                [
                    "kind": .string(document.kind.rawValue), "id": .string(document.id),
                    "packageVersion": .string(document.packageVersion), "changed": .bool(document.changed),
                ]
            }),
            "images": [
                "new": .int(newImages), "reused": .int(reusedImages), "bytes": .int(imageBytes),
                "largest": largestImage.map { ["path": .string($0.path), "bytes": .int($0.bytes)] } ?? .null,
            ],
            "warnings": .array(warnings.map(JSONValue.string)),
        ])
    }
}
