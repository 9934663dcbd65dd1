#!/usr/bin/env python3
"""Parses HTML from stdin with Python's html.parser and prints what a browser's tokenizer would see, as
JSON: ["start", tag, [[name, value], ...]], ["startend", tag, attrs], ["end", tag], ["text", data],
["decl", text], with character references decoded. PulseHTMLTests compares it with what was meant,
so "escaped" is checked by an independent parser, not by the escaper's own idea of it."""
import json
import sys
from html.parser import HTMLParser


class Events(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.events = []

    def handle_starttag(self, tag, attrs):
        self.events.append(["start", tag, [[n, v] for n, v in attrs]])

    def handle_startendtag(self, tag, attrs):
        self.events.append(["startend", tag, [[n, v] for n, v in attrs]])

    def handle_endtag(self, tag):
        self.events.append(["end", tag])

    def handle_data(self, data):
        if self.events and self.events[-1][0] == "text":
            self.events[-1][1] += data
        else:
            self.events.append(["text", data])

    def handle_decl(self, decl):
        self.events.append(["decl", decl])

    def handle_comment(self, data):
        self.events.append(["comment", data])

    def unknown_decl(self, data):
        self.events.append(["unknown", data])


parser = Events()
parser.feed(sys.stdin.buffer.read().decode("utf-8", errors="strict"))
parser.close()
json.dump(parser.events, sys.stdout, ensure_ascii=False)
