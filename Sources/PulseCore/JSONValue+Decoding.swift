import Foundation

extension JSONValue {
    /// Parses `data` with the strict parser and decodes a `T` from it: what `JSONDecoder().decode` did,
    /// without a second, lenient parser (indexes, key tables).
    /// - Throws: `JSONValue.SyntaxError` for bad JSON, `DecodingError` for a document of the wrong shape.
    public static func decode<T: Decodable>(_ type: T.Type, from data: some Sequence<UInt8>) throws -> T {
        try parse(data).decode(type)
    }

    /// Decodes a `T` from this value.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try T(from: ValueDecoder(value: self, codingPath: []))
    }
}

/// A `Decoder` reading a `JSONValue`: objects are keyed containers, arrays unkeyed ones.
private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case let .object(fields) = value else { throw mismatch([String: JSONValue].self, value, codingPath) }
        return KeyedDecodingContainer(Keyed(fields: fields, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case let .array(items) = value else { throw mismatch([JSONValue].self, value, codingPath) }
        return Unkeyed(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(value: value, codingPath: codingPath) }
}

private func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
    .typeMismatch(type, .init(codingPath: path, debugDescription: "expected \(type), found \(value.kindName)"))
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { fields.keys.compactMap(Key.init(stringValue:)) }
    func contains(_ key: Key) -> Bool { fields[key.stringValue] != nil }

    private func child(_ key: Key) throws -> ValueDecoder {
        guard let value = fields[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing \"\(key.stringValue)\""))
        }
        return ValueDecoder(value: value, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { fields[key.stringValue] == .null }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try T(from: child(key)) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try Bool(from: child(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try String(from: child(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try Double(from: child(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try Float(from: child(key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try Int(from: child(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try Int8(from: child(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try Int16(from: child(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try Int32(from: child(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try Int64(from: child(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try UInt(from: child(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try UInt8(from: child(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try UInt16(from: child(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try UInt32(from: child(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try UInt64(from: child(key)) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try child(key).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try child(key).unkeyedContainer() }
    func superDecoder() throws -> any Decoder { ValueDecoder(value: .object(fields), codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }
}

private struct Unkeyed: UnkeyedDecodingContainer {
    let items: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(items: [JSONValue], codingPath: [any CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private mutating func next() throws -> ValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: codingPath, debugDescription: "the array has no more items"))
        }
        defer { currentIndex += 1 }
        return ValueDecoder(value: items[currentIndex], codingPath: codingPath + [IndexKey(intValue: currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: next()) }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try Bool(from: next()) }
    mutating func decode(_ type: String.Type) throws -> String { try String(from: next()) }
    mutating func decode(_ type: Double.Type) throws -> Double { try Double(from: next()) }
    mutating func decode(_ type: Float.Type) throws -> Float { try Float(from: next()) }
    mutating func decode(_ type: Int.Type) throws -> Int { try Int(from: next()) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try Int8(from: next()) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try Int16(from: next()) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try Int32(from: next()) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try Int64(from: next()) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try UInt(from: next()) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try UInt8(from: next()) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try UInt16(from: next()) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try UInt32(from: next()) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try UInt64(from: next()) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try next() }
}

private struct Single: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value == .null }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case let .bool(bool) = value else { throw mismatch(type, value, codingPath) }
        return bool
    }

    func decode(_ type: String.Type) throws -> String {
        guard case let .string(text) = value else { throw mismatch(type, value, codingPath) }
        return text
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch value {
        case let .double(number): return number
        case let .int(number): return Double(number)
        default: throw mismatch(type, value, codingPath)
        }
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let value = value as? T { return value }  // JSONValue itself
        return try T(from: ValueDecoder(value: value, codingPath: codingPath))
    }

    /// An integer in range: JSON integers only (no `1.0`, no `1e3`), as the files the tools write hold.
    private func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        guard case let .int(number) = value else { throw mismatch(type, value, codingPath) }
        guard let exact = I(exactly: number) else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(number) does not fit \(type)"))
        }
        return exact
    }
}
