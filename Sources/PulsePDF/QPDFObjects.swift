import CQPDF
import Glibc

/// An indirect object's identity in the source: number and generation in one integer.
typealias ObjectID = Int64

/// Read access to a parsed document's objects through qpdf's C API.
///
/// Handles (`qpdf_oh`) stay valid until `qpdf_oh_release_all`, which the page writer calls after each
/// page. Names are raw bytes with their leading slash and `#xx` escapes decoded, as qpdf gives
/// dictionary keys (a PDF name need not be UTF-8).
struct QPDFObjects {
    let qpdf: qpdf_data?

    static func id(_ number: Int32, _ generation: Int32) -> ObjectID { Int64(number) << 16 | Int64(generation & 0xffff) }

    func object(_ id: ObjectID) -> qpdf_oh { qpdf_get_object_by_id(qpdf, Int32(id >> 16), Int32(id & 0xffff)) }

    func id(of handle: qpdf_oh) -> ObjectID {
        Self.id(qpdf_oh_get_object_id(qpdf, handle), qpdf_oh_get_generation(qpdf, handle))
    }

    func isIndirect(_ handle: qpdf_oh) -> Bool { qpdf_oh_is_indirect(qpdf, handle) != QPDF_FALSE }
    func isStream(_ handle: qpdf_oh) -> Bool { qpdf_oh_is_stream(qpdf, handle) != QPDF_FALSE }
    /// A dictionary, not a stream (use `dictionary(of:)` for a stream's).
    func isDictionary(_ handle: qpdf_oh) -> Bool { qpdf_oh_is_dictionary(qpdf, handle) != QPDF_FALSE }
    func isArray(_ handle: qpdf_oh) -> Bool { qpdf_oh_is_array(qpdf, handle) != QPDF_FALSE }

    /// A stream's dictionary, or the object itself.
    func dictionary(of handle: qpdf_oh) -> qpdf_oh { isStream(handle) ? qpdf_oh_get_dict(qpdf, handle) : handle }

    /// The dictionary's keys, sorted bytewise (the order every dictionary is written in).
    func keys(_ dictionary: qpdf_oh) -> [[UInt8]] {
        // The key iterator is one per document: collect all keys before looking at any value.
        var keys: [[UInt8]] = []
        qpdf_oh_begin_dict_key_iter(qpdf, dictionary)
        while qpdf_oh_dict_more_keys(qpdf) != QPDF_FALSE {
            if let key = qpdf_oh_dict_next_key(qpdf) {
                keys.append(Array(UnsafeRawBufferPointer(start: key, count: strlen(key))))
            }
        }
        return keys.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The value of `key` (a null object when absent).
    func value(_ dictionary: qpdf_oh, _ key: [UInt8]) -> qpdf_oh {
        (key + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { qpdf_oh_get_key(qpdf, dictionary, $0.baseAddress) } }
    }

    func value(_ dictionary: qpdf_oh, _ key: String) -> qpdf_oh { qpdf_oh_get_key(qpdf, dictionary, key) }

    func has(_ dictionary: qpdf_oh, _ key: String) -> Bool { qpdf_oh_has_key(qpdf, dictionary, key) != QPDF_FALSE }

    func has(_ dictionary: qpdf_oh, _ key: [UInt8]) -> Bool {
        (key + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { qpdf_oh_has_key(qpdf, dictionary, $0.baseAddress) } }
            != QPDF_FALSE
    }

    /// The name's bytes (with the slash), or nil if `handle` is not a name.
    func name(_ handle: qpdf_oh) -> [UInt8]? {
        guard qpdf_oh_is_name(qpdf, handle) != QPDF_FALSE, let text = qpdf_oh_get_name(qpdf, handle) else { return nil }
        return Array(UnsafeRawBufferPointer(start: text, count: strlen(text)))
    }

    func isName(_ handle: qpdf_oh, _ name: String) -> Bool { qpdf_oh_is_name_and_equals(qpdf, handle, name) != QPDF_FALSE }

    func integer(_ handle: qpdf_oh) -> Int? {
        qpdf_oh_is_integer(qpdf, handle) != QPDF_FALSE ? Int(qpdf_oh_get_int_value(qpdf, handle)) : nil
    }

    func items(_ array: qpdf_oh) -> [qpdf_oh] {
        guard isArray(array) else { return [] }
        return (0..<qpdf_oh_get_array_n_items(qpdf, array)).map { qpdf_oh_get_array_item(qpdf, array, $0) }
    }

    /// A scalar (number, string, name, boolean, null) as PDF syntax.
    func unparse(_ handle: qpdf_oh, into out: inout [UInt8]) throws {
        guard let text = qpdf_oh_unparse_binary(qpdf, handle) else { throw PDFError.damaged(takeError() ?? "cannot write a value") }
        let count = qpdf_get_last_string_length(qpdf)
        out += UnsafeRawBufferPointer(start: text, count: count)
    }

    /// A stream's bytes as stored (still encoded).
    func rawData(_ stream: qpdf_oh) throws -> [UInt8] {
        var data: UnsafeMutablePointer<UInt8>?
        var length = 0
        guard qpdf_oh_get_stream_data(qpdf, stream, qpdf_dl_none, nil, &data, &length) & QPDF_ERRORS == 0 else {
            throw PDFError.damaged(takeError() ?? "cannot read stream \(id(of: stream) >> 16)")
        }
        defer { free(data) }
        return length > 0 ? Array(UnsafeBufferPointer(start: data, count: length)) : []
    }

    /// A content stream's bytes, decoded (Flate, LZW, ASCII85, ASCIIHex, RunLength).
    func decodedData(_ stream: qpdf_oh) throws -> [UInt8] {
        var data: UnsafeMutablePointer<UInt8>?
        var length = 0
        var filtered: QPDF_BOOL = QPDF_FALSE
        let status = qpdf_oh_get_stream_data(qpdf, stream, qpdf_dl_generalized, &filtered, &data, &length)
        defer { free(data) }
        guard status & QPDF_ERRORS == 0, filtered != QPDF_FALSE else {
            throw PDFError.damaged("stream \(id(of: stream) >> 16) cannot be decoded (\(takeError() ?? "unsupported filter"))")
        }
        return length > 0 ? Array(UnsafeBufferPointer(start: data, count: length)) : []
    }

    /// A stream's bytes decoded with the generalized filters (Flate, LZW, ASCII85, ASCIIHex,
    /// RunLength; none is fine), or nil if it uses another (an image codec), which stays as stored.
    func decodedDataIfPossible(_ stream: qpdf_oh) throws -> [UInt8]? {
        // Without a buffer qpdf only says whether it would decode, and fails when it would not.
        var filterable: QPDF_BOOL = QPDF_FALSE
        guard qpdf_oh_get_stream_data(qpdf, stream, qpdf_dl_generalized, &filterable, nil, nil) & QPDF_ERRORS == 0 else {
            _ = takeError()
            return nil
        }
        guard filterable != QPDF_FALSE else { return nil }
        return try decodedData(stream)
    }

    func takeError() -> String? {
        guard qpdf_has_error(qpdf) != QPDF_FALSE, let error = qpdf_get_error(qpdf) else { return nil }
        return qpdf_get_error_message_detail(qpdf, error).map { String(cString: $0) }
    }
}
