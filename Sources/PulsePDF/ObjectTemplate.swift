import PulseCrypto

/// What a reference in a written page points at.
enum Reference: Hashable {
    /// A source object, written through the generic filter.
    case object(ObjectID)
    /// An annotation of the page, written through the annotation filter (`PageIsolation`).
    case annotation(ObjectID)
    /// A page: the page being written, or `null` for any other.
    case page(ObjectID)
    /// A Type 3 font, with only the glyphs the page being written shows.
    case glyphs(ObjectID)
}

/// An object's serialized body with its references left open: they are filled in with the numbers of
/// the page being written (`PageWriter` numbers each page's objects from the page), so one template
/// serves every page that reaches the object, whatever number it gets there.
struct ObjectTemplate {
    struct Slot {
        /// Where the reference goes in `bytes`.
        var offset: Int
        var reference: Reference
    }

    var bytes: [UInt8] = []
    /// In the order they appear in `bytes`: the traversal order that numbers a page's objects.
    var slots: [Slot] = []
    /// SHA-256 of the bytes and slot offsets: with the numbers filled in, it determines the object's
    /// bytes (see `PageWriter.assemble`). Set by `finish()`.
    private(set) var digest: [UInt8] = []

    mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(reference: Reference) {
        slots.append(Slot(offset: bytes.count, reference: reference))
    }

    mutating func finish() {
        let hasher = SHA256Hasher()
        var offsets: [UInt8] = []
        offsets.reserveCapacity(slots.count * 8 + 8)
        withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { offsets += $0 }
        hasher.update(offsets)
        hasher.update(bytes)
        offsets.removeAll(keepingCapacity: true)
        for slot in slots { withUnsafeBytes(of: UInt64(slot.offset).littleEndian) { offsets += $0 } }
        hasher.update(offsets)
        digest = hasher.finalize()
    }
}
