// Package pcapng writes capture files in the pcapng format (draft-ietf-opsawg-pcapng): one little-endian
// section with a Section Header Block, Interface Description Blocks with nanosecond timestamps and
// Enhanced Packet Blocks that may carry a comment.
package pcapng

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// LinkTypeEthernet is LINKTYPE_ETHERNET, the link type of every seg6x port.
const LinkTypeEthernet = 1

// Block types, option codes and constants from the spec.
const (
	blockSHB = 0x0A0D0D0A
	blockIDB = 0x00000001
	blockEPB = 0x00000006

	byteOrderMagic = 0x1A2B3C4D

	optEndOfOpt  = 0
	optComment   = 1
	optUserAppl  = 4 // shb_userappl
	optIfName    = 2 // if_name
	optIfDescr   = 3 // if_description
	optIfTSResol = 9 // if_tsresol

	tsResolNanoseconds = 9 // 10^-9 s
)

// Interface is one capture point, written as an Interface Description Block.
type Interface struct {
	Name        string // if_name, e.g. "rx ta0"
	Description string // if_description, e.g. "frames as received on ta0"
	LinkType    uint16 // LINKTYPE_*; 1 (LinkTypeEthernet) for Ethernet
	SnapLen     uint32 // most bytes captured per packet; 0: no limit
}

// Packet is one captured frame, written as an Enhanced Packet Block.
type Packet struct {
	Interface int       // index returned by AddInterface
	Time      time.Time // written with nanosecond resolution
	Data      []byte    // captured bytes (may be shorter than OrigLen)
	OrigLen   int       // the frame's full length; 0 means len(Data)
	Comment   string    // opt_comment; omitted when empty
}

// Writer writes one pcapng section. It buffers: call Flush before closing the underlying writer.
// It is not safe for concurrent use. After the underlying writer fails, every call returns that error.
type Writer struct {
	bw       *bufio.Writer
	snapLens []uint32 // per interface, to check packets against
	buf      []byte   // the block being built
	err      error
}

// NewWriter writes the Section Header Block (byte order magic, version 1.0, unknown section length,
// shb_userappl = app when app is not empty).
func NewWriter(w io.Writer, app string) (*Writer, error) {
	wr := &Writer{bw: bufio.NewWriterSize(w, 64<<10)}
	wr.begin(blockSHB)
	wr.u32(byteOrderMagic)
	wr.u16(1)              // major version
	wr.u16(0)              // minor version
	wr.u64(math.MaxUint64) // section length -1: not specified
	if app != "" {
		if err := wr.stringOption(optUserAppl, app); err != nil {
			return nil, err
		}
		wr.endOptions()
	}
	if err := wr.end(); err != nil {
		return nil, err
	}
	return wr, nil
}

// AddInterface writes an Interface Description Block (if_name and if_description when not empty,
// if_tsresol = 9) and returns the interface's index for Packet.Interface. It may be called before or
// between packets.
func (w *Writer) AddInterface(i Interface) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.begin(blockIDB)
	w.u16(i.LinkType)
	w.u16(0) // reserved
	w.u32(i.SnapLen)
	if i.Name != "" {
		if err := w.stringOption(optIfName, i.Name); err != nil {
			return 0, fmt.Errorf("pcapng: interface %q: %w", i.Name, err)
		}
	}
	if i.Description != "" {
		if err := w.stringOption(optIfDescr, i.Description); err != nil {
			return 0, fmt.Errorf("pcapng: interface %q: %w", i.Name, err)
		}
	}
	_ = w.option(optIfTSResol, []byte{tsResolNanoseconds})
	w.endOptions()
	if err := w.end(); err != nil {
		return 0, err
	}
	w.snapLens = append(w.snapLens, i.SnapLen)
	return len(w.snapLens) - 1, nil
}

// WritePacket writes an Enhanced Packet Block. It refuses, writing nothing, a packet whose interface
// was not added, whose Data is longer than OrigLen or the interface's SnapLen, whose time is before
// 1970 or whose comment is longer than an option can hold (65535 bytes).
func (w *Writer) WritePacket(p Packet) error {
	if w.err != nil {
		return w.err
	}
	if p.Interface < 0 || p.Interface >= len(w.snapLens) {
		return fmt.Errorf("pcapng: packet on interface %d, but %d interfaces were added", p.Interface, len(w.snapLens))
	}
	origLen := p.OrigLen
	if origLen == 0 {
		origLen = len(p.Data)
	}
	if len(p.Data) > origLen || origLen > math.MaxUint32 {
		return fmt.Errorf("pcapng: %d captured bytes, original length %d", len(p.Data), p.OrigLen)
	}
	if snap := w.snapLens[p.Interface]; snap != 0 && len(p.Data) > int(snap) {
		return fmt.Errorf("pcapng: %d captured bytes exceed interface %d's snaplen %d", len(p.Data), p.Interface, snap)
	}
	ns := p.Time.UnixNano()
	if ns < 0 {
		return fmt.Errorf("pcapng: packet time %v is before 1970", p.Time)
	}
	w.begin(blockEPB)
	w.u32(uint32(p.Interface))
	w.u32(uint32(uint64(ns) >> 32)) // timestamp (high)
	w.u32(uint32(ns))               // timestamp (low)
	w.u32(uint32(len(p.Data)))      // captured packet length
	w.u32(uint32(origLen))          // original packet length
	w.padded(p.Data)
	if p.Comment != "" {
		if err := w.stringOption(optComment, p.Comment); err != nil {
			return fmt.Errorf("pcapng: packet comment: %w", err)
		}
		w.endOptions()
	}
	return w.end()
}

// Flush writes buffered blocks to the underlying writer.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	w.err = w.bw.Flush()
	return w.err
}

// begin starts a block: type and a placeholder for the total length, filled in by end.
func (w *Writer) begin(blockType uint32) {
	w.buf = w.buf[:0]
	w.u32(blockType)
	w.u32(0)
}

// end fills in the block total length at both ends and hands the block to the buffer.
func (w *Writer) end() error {
	total := uint32(len(w.buf) + 4)
	binary.LittleEndian.PutUint32(w.buf[4:], total)
	w.u32(total)
	if _, err := w.bw.Write(w.buf); err != nil {
		w.err = err
	}
	return w.err
}

// stringOption appends a string option. Strings must be valid UTF-8 (the spec says so): invalid
// sequences become U+FFFD.
func (w *Writer) stringOption(code uint16, s string) error {
	return w.option(code, []byte(strings.ToValidUTF8(s, "\uFFFD")))
}

// option appends one option: code, length without padding, value padded to 32 bits.
func (w *Writer) option(code uint16, value []byte) error {
	if len(value) > math.MaxUint16 {
		return errors.New("option value longer than 65535 bytes")
	}
	w.u16(code)
	w.u16(uint16(len(value)))
	w.padded(value)
	return nil
}

// endOptions closes an option list with opt_endofopt.
func (w *Writer) endOptions() {
	w.u16(optEndOfOpt)
	w.u16(0)
}

func (w *Writer) padded(b []byte) {
	w.buf = append(w.buf, b...)
	for len(w.buf)%4 != 0 {
		w.buf = append(w.buf, 0)
	}
}

func (w *Writer) u16(v uint16) { w.buf = binary.LittleEndian.AppendUint16(w.buf, v) }
func (w *Writer) u32(v uint32) { w.buf = binary.LittleEndian.AppendUint32(w.buf, v) }
func (w *Writer) u64(v uint64) { w.buf = binary.LittleEndian.AppendUint64(w.buf, v) }
