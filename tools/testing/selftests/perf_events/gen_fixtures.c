// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the crafted ELF fixtures for the build-ID mmap2 selftests.
 *
 * gcc and ld only produce well-formed files in a few layouts, so the layouts
 * a parser gets wrong (program headers or notes past the first page, a note
 * straddling a page boundary, decoy notes, a second PT_NOTE) and the
 * malformed files it must reject are written here, byte by byte.
 *
 * c_* files must yield their build ID, m_* files must not, and l_* files
 * carry an id that the 5.10 series' own limits may keep the kernel from
 * reporting (their tests say when).  Every c_* and l_* file gets a sidecar
 * NAME.id holding the id bytes in hex, as embedded by this program; the tests compare the
 * kernel's bytes against it and never carry expected ids themselves.  Each
 * file gets its own id (derived from its name) so that a kernel reporting
 * the id of a previously mapped file cannot pass.
 *
 * This runs on the build host but writes files for the target: the byte
 * order and e_machine come from an object file that the target compiler
 * produced (TEMPLATE), so a cross build gets fixtures the target kernel
 * reads as they are meant.  Layouts are measured in units of 64 KiB, the
 * largest page size of the kernels under test, so a boundary placed in a
 * fixture is a page boundary whatever the page size (4, 16 or 64 KiB).
 *
 * Usage: gen_fixtures OUTDIR TEMPLATE
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE 65536
#define NT_BUILD_ID 3

/* The target's byte order and machines (ELF64, ELF32). */
static int target_data = ELFDATA2LSB;
static uint16_t machine64 = EM_X86_64, machine32 = EM_386;

struct img {
	unsigned char *b;
	size_t len;
};

static void die(const char *what)
{
	fprintf(stderr, "gen_fixtures: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void need(struct img *m, size_t end)
{
	if (end <= m->len)
		return;
	m->b = realloc(m->b, end);
	if (!m->b)
		die("realloc");
	memset(m->b + m->len, 0, end - m->len);
	m->len = end;
}

static void put(struct img *m, uint64_t off, const void *p, size_t n)
{
	need(m, off + n);
	if (n)
		memcpy(m->b + off, p, n);
}

/* An integer of @n bytes at @off, in the target's byte order. */
static void put_int(struct img *m, uint64_t off, uint64_t v, size_t n)
{
	size_t i;

	need(m, off + n);
	for (i = 0; i < n; i++) {
		size_t k = target_data == ELFDATA2LSB ? i : n - 1 - i;

		m->b[off + k] = (unsigned char)(v >> (8 * i));
	}
}

static uint64_t get_int(const unsigned char *p, size_t n, int data)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[data == ELFDATA2LSB ? i : n - 1 - i] << (8 * i);
	return v;
}

/* Byte order and machine of the target, from an object its compiler made. */
static void read_template(const char *path)
{
	unsigned char e[sizeof(Elf64_Ehdr)];
	int fd = open(path, O_RDONLY);

	if (fd < 0 || read(fd, e, sizeof(e)) < (ssize_t)sizeof(Elf32_Ehdr))
		die(path);
	close(fd);
	if (memcmp(e, ELFMAG, SELFMAG) ||
	    (e[EI_DATA] != ELFDATA2LSB && e[EI_DATA] != ELFDATA2MSB)) {
		fprintf(stderr, "gen_fixtures: %s: not an ELF object\n", path);
		exit(1);
	}
	target_data = e[EI_DATA];
	machine64 = (uint16_t)get_int(e + offsetof(Elf64_Ehdr, e_machine), 2, target_data);
	/* ELF32 fixtures carry the 32-bit sibling; the kernel ignores e_machine. */
	switch (machine64) {
	case EM_X86_64:
		machine32 = EM_386;
		break;
	case EM_AARCH64:
		machine32 = EM_ARM;
		break;
	case EM_PPC64:
		machine32 = EM_PPC;
		break;
	default:
		machine32 = machine64;
	}
}

/* Deterministic, distinct per fixture: a stale id from another file fails. */
static void make_id(const char *name, const char *salt, unsigned char *id, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	const char *s;
	size_t i;

	for (s = name; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	for (s = salt; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	for (i = 0; i < n; i++) {
		h ^= h << 13;
		h ^= h >> 7;
		h ^= h << 17;
		id[i] = (unsigned char)(h >> 24);
	}
}

static size_t align4(size_t v)
{
	return (v + 3) & ~(size_t)3;
}

/*
 * One note at @off: header, @name_bytes of @name and @desc_bytes of @desc,
 * each padded to 4 bytes.  namesz/descsz are written as given, so they can
 * lie about the bytes that follow.  Returns the offset after the note.
 */
static uint64_t put_note(struct img *m, uint64_t off, uint32_t namesz,
			 const void *name, size_t name_bytes, uint32_t type,
			 uint32_t descsz, const void *desc, size_t desc_bytes)
{
	put_int(m, off, namesz, 4);
	put_int(m, off + 4, descsz, 4);
	put_int(m, off + 8, type, 4);
	off += 12;
	put(m, off, name, name_bytes);
	need(m, off + align4(name_bytes));
	off += align4(name_bytes);
	put(m, off, desc, desc_bytes);
	need(m, off + align4(desc_bytes));
	return off + align4(desc_bytes);
}

static uint64_t put_gnu_note(struct img *m, uint64_t off, uint32_t type,
			     const unsigned char *desc, size_t n)
{
	return put_note(m, off, 4, "GNU", 4, type, n, desc, n);
}

#define F64(field, v) put_int(m, offsetof(Elf64_Ehdr, field), v, sizeof(((Elf64_Ehdr *)0)->field))
#define F32(field, v) put_int(m, offsetof(Elf32_Ehdr, field), v, sizeof(((Elf32_Ehdr *)0)->field))

static void put_ehdr(struct img *m, int cls, uint16_t type, uint64_t phoff, uint16_t phnum)
{
	unsigned char ident[EI_NIDENT] = { 0 };

	memcpy(ident, ELFMAG, SELFMAG);
	ident[EI_CLASS] = cls;
	ident[EI_DATA] = target_data;
	ident[EI_VERSION] = EV_CURRENT;
	put(m, 0, ident, sizeof(ident));
	if (cls == ELFCLASS64) {
		F64(e_type, type);
		F64(e_machine, machine64);
		F64(e_version, EV_CURRENT);
		F64(e_entry, 0x400000);
		F64(e_phoff, phoff);
		F64(e_ehsize, sizeof(Elf64_Ehdr));
		F64(e_phentsize, sizeof(Elf64_Phdr));
		F64(e_phnum, phnum);
	} else {
		F32(e_type, type);
		F32(e_machine, machine32);
		F32(e_version, EV_CURRENT);
		F32(e_entry, 0x8048000);
		F32(e_phoff, (uint32_t)phoff);
		F32(e_ehsize, sizeof(Elf32_Ehdr));
		F32(e_phentsize, sizeof(Elf32_Phdr));
		F32(e_phnum, phnum);
	}
}

/* Overwrites e_phoff or e_phnum of an ELF64 header already written. */
static void set_phoff64(struct img *m, uint64_t v)
{
	F64(e_phoff, v);
}

static void set_phnum64(struct img *m, uint16_t v)
{
	F64(e_phnum, v);
}

static size_t phent(int cls)
{
	return cls == ELFCLASS64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
}

#define P64(field, v) put_int(m, at + offsetof(Elf64_Phdr, field), v, \
			      sizeof(((Elf64_Phdr *)0)->field))
#define P32(field, v) put_int(m, at + offsetof(Elf32_Phdr, field), v, \
			      sizeof(((Elf32_Phdr *)0)->field))

static void put_phdr_align(struct img *m, int cls, uint64_t phoff, unsigned int idx,
			   uint32_t type, uint64_t off, uint64_t filesz, uint64_t align)
{
	uint32_t flags = type == PT_LOAD ? PF_R | PF_X : PF_R;
	uint64_t at = phoff + idx * phent(cls);

	if (cls == ELFCLASS64) {
		P64(p_type, type);
		P64(p_flags, flags);
		P64(p_offset, off);
		P64(p_vaddr, 0x400000 + off);
		P64(p_paddr, 0x400000 + off);
		P64(p_filesz, filesz);
		P64(p_memsz, filesz);
		P64(p_align, align);
	} else {
		P32(p_type, type);
		P32(p_flags, flags);
		P32(p_offset, (uint32_t)off);
		P32(p_vaddr, (uint32_t)(0x8048000 + off));
		P32(p_paddr, (uint32_t)(0x8048000 + off));
		P32(p_filesz, (uint32_t)filesz);
		P32(p_memsz, (uint32_t)filesz);
		P32(p_align, (uint32_t)align);
	}
}

static void put_phdr(struct img *m, int cls, uint64_t phoff, unsigned int idx,
		     uint32_t type, uint64_t off, uint64_t filesz)
{
	put_phdr_align(m, cls, phoff, idx, type, off, filesz, type == PT_LOAD ? PAGE : 4);
}

/*
 * The shape ld produces: ELF header, then [PT_LOAD over the whole file,
 * PT_NOTE over the notes] at @phoff.  Called last, once the file has its
 * final length.
 */
static void finish(struct img *m, int cls, uint16_t type, uint64_t phoff,
		   uint64_t note_off, uint64_t note_len)
{
	need(m, phoff + 2 * phent(cls));
	put_ehdr(m, cls, type, phoff, 2);
	put_phdr(m, cls, phoff, 0, PT_LOAD, 0, m->len);
	put_phdr(m, cls, phoff, 1, PT_NOTE, note_off, note_len);
}

struct ctx {
	const char *name;
	struct img m;
	unsigned char id[20];	/* the build ID this fixture carries */
	size_t id_len;		/* 0: the kernel must fall back */
};

static void gnu_id(struct ctx *c, size_t n)
{
	make_id(c->name, "", c->id, n);
	c->id_len = n;
}

/* A plain, valid file; @mutate then breaks exactly one thing. */
static void valid(struct ctx *c, int cls, uint16_t type)
{
	uint64_t phoff = cls == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	uint64_t end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, 0x100, NT_BUILD_ID, c->id, 20);
	need(&c->m, 0x200);
	finish(&c->m, cls, type, phoff, 0x100, end - 0x100);
}

/* Rewrites the PT_NOTE header of an ELF64 valid() file. */
static void set_note_phdr64(struct ctx *c, uint64_t off, uint64_t filesz)
{
	put_phdr(&c->m, ELFCLASS64, sizeof(Elf64_Ehdr), 1, PT_NOTE, off, filesz);
}

/* ---- files that must yield their build ID ---- */

static void c_elf64_exec(struct ctx *c) { valid(c, ELFCLASS64, ET_EXEC); }
static void c_elf64_dyn(struct ctx *c) { valid(c, ELFCLASS64, ET_DYN); }
static void c_elf32_exec(struct ctx *c) { valid(c, ELFCLASS32, ET_EXEC); }
static void c_elf32_dyn(struct ctx *c) { valid(c, ELFCLASS32, ET_DYN); }

/*
 * ld writes a 1-byte id as a 17-byte note with no padding, so its padded end
 * lies past p_filesz and upstream rejects it (see g_hex1_unpadded).  A
 * 1-byte id in a properly padded note must be accepted.
 */
static void c_size_1(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 1);
	end = put_gnu_note(&c->m, 0x100, NT_BUILD_ID, c->id, 1);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
}

/* Program headers on page 2: a parser must honour e_phoff past page 0. */
static void c_phdrs_page2(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, 0x100, NT_BUILD_ID, c->id, 20);
	need(&c->m, 3 * PAGE);
	finish(&c->m, ELFCLASS64, ET_DYN, 2 * PAGE + 0x40, 0x100, end - 0x100);
}

/* The note on page 3. */
static void c_note_page3(struct ctx *c)
{
	uint64_t off = 3 * PAGE + 0x80, end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, off, end - off);
}

/* Both past page 0, ELF32. */
static void c_elf32_beyond_page0(struct ctx *c)
{
	uint64_t off = 2 * PAGE + 0x10, end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	finish(&c->m, ELFCLASS32, ET_EXEC, PAGE + 0x34, off, end - off);
}

/* The note header itself crosses the page 0/1 boundary. */
static void c_note_straddle_hdr(struct ctx *c)
{
	uint64_t off = PAGE - 8, end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, off, end - off);
}

/* Header on page 0, id bytes crossing into page 1. */
static void c_note_straddle_desc(struct ctx *c)
{
	uint64_t off = PAGE - 20, end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, off, end - off);
}

/*
 * Notes before the build ID in the same PT_NOTE, including decoys a sloppy
 * parser takes: a type-3 note with another owner (upstream fix "Only
 * consider GNU notes"), a Go build ID (type 4), a GNU type-3 note whose
 * descsz exceeds 20.
 */
static void c_several_notes(struct ctx *c)
{
	unsigned char junk[24];
	uint64_t off = 0x100;

	make_id(c->name, "decoy", junk, sizeof(junk));
	off = put_gnu_note(&c->m, off, NT_GNU_ABI_TAG, junk, 16);
	off = put_gnu_note(&c->m, off, 5 /* NT_GNU_PROPERTY_TYPE_0 */, junk, 16);
	off = put_note(&c->m, off, 3, "Go", 4, 4, 20, junk, 20);
	off = put_note(&c->m, off, 4, "Xen", 4, NT_BUILD_ID, 20, junk + 1, 20);
	off = put_gnu_note(&c->m, off, NT_BUILD_ID, junk, 24);
	gnu_id(c, 20);
	off = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, off - 0x100);
}

/* First PT_NOTE: an ABI tag and a foreign type-3 note; the id is in the 2nd. */
static void c_second_ptnote(struct ctx *c)
{
	unsigned char junk[20];
	uint64_t end1, end2;

	make_id(c->name, "decoy", junk, sizeof(junk));
	end1 = put_gnu_note(&c->m, 0x100, NT_GNU_ABI_TAG, junk, 16);
	end1 = put_note(&c->m, end1, 4, "Xen", 4, NT_BUILD_ID, 20, junk, 20);
	gnu_id(c, 20);
	end2 = put_gnu_note(&c->m, 0x200, NT_BUILD_ID, c->id, 20);
	put_ehdr(&c->m, ELFCLASS64, ET_DYN, 64, 3);
	put_phdr(&c->m, ELFCLASS64, 64, 0, PT_LOAD, 0, c->m.len);
	put_phdr(&c->m, ELFCLASS64, 64, 1, PT_NOTE, 0x100, end1 - 0x100);
	put_phdr(&c->m, ELFCLASS64, 64, 2, PT_NOTE, 0x200, end2 - 0x200);
}

/*
 * 256 program headers, the PT_NOTE last (index 255): the cap on the
 * phdr count is at least 256 (the 5.12 parser stopped at 72).  The table
 * spans pages 0-3.
 */
static void c_phnum_256(struct ctx *c)
{
	uint64_t off = 64 + 256 * sizeof(Elf64_Phdr), end;
	unsigned int i;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	put_ehdr(&c->m, ELFCLASS64, ET_DYN, 64, 256);
	put_phdr(&c->m, ELFCLASS64, 64, 0, PT_LOAD, 0, end);
	for (i = 1; i < 255; i++)
		put_phdr(&c->m, ELFCLASS64, 64, i, PT_NULL, 0, 0);
	put_phdr(&c->m, ELFCLASS64, 64, 255, PT_NOTE, off, end - off);
}

/* ---- the series' own limits: readelf finds the id, the kernel may not ---- */

/* @fillers notes of another type, then the build ID, in one PT_NOTE. */
static void notes_behind(struct ctx *c, unsigned int fillers)
{
	uint64_t off = 0x100;
	unsigned int i;

	for (i = 0; i < fillers; i++)
		off = put_gnu_note(&c->m, off, 0x100, NULL, 0);
	gnu_id(c, 20);
	off = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, off - 0x100);
}

/* The series walks at most 1024 notes per file: the id is the 1024th. */
static void l_notes_1023(struct ctx *c) { notes_behind(c, 1023); }
/* ...and here the 1026th: past the cap (upstream has none). */
static void l_notes_1025(struct ctx *c) { notes_behind(c, 1025); }

/*
 * A valid note, but p_filesz says 4 GiB + its length.  The series looks for
 * notes in the first 4 GiB of a file only; 6.12 keeps the low 32 bits of
 * p_filesz and finds the id.
 */
static void l_filesz_4g(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, 0x100, NT_BUILD_ID, c->id, 20);
	need(&c->m, 0x200);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, (1ull << 32) + (end - 0x100));
}

/*
 * For a hugetlbfs copy: the id's note in the second 4 KiB page, a decoy
 * build-ID note 2 MiB further on.  5.10 indexes the hugetlbfs page cache in
 * huge pages, so a reader asking for 4 KiB page 1 gets huge page 1 and
 * reads the decoy; the series refuses hugetlbfs files instead.
 */
static void l_hugetlb(struct ctx *c)
{
	unsigned char decoy[20];
	uint64_t end;

	make_id(c->name, "decoy", decoy, sizeof(decoy));
	put_gnu_note(&c->m, (2 << 20) + 0x100, NT_BUILD_ID, decoy, sizeof(decoy));
	gnu_id(c, 20);
	end = put_gnu_note(&c->m, 0x1100, NT_BUILD_ID, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x1100, end - 0x1100);
}

/*
 * For a tmpfs mounted huge=always: 2 MiB, so one transparent huge page
 * holds it, the id's note 1 MiB in, and a decoy at the same offset within
 * page 0, where a reader that took the huge page's head page would look.
 */
static void l_thp(struct ctx *c)
{
	unsigned char decoy[20];
	uint64_t off = (1 << 20) + 0x100, end;

	make_id(c->name, "decoy", decoy, sizeof(decoy));
	put_gnu_note(&c->m, 0x100, NT_BUILD_ID, decoy, sizeof(decoy));
	gnu_id(c, 20);
	end = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	need(&c->m, 2 << 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, off, end - off);
}

/*
 * A note segment aligned to 8 (p_align 8, each name and descriptor padded
 * to 8, as readelf reads it): another note with a 20-byte descriptor, then
 * the id.  The kernel steps by 4 like 6.12 does, loses the note boundary
 * and falls back: a known limit, shared with upstream.
 */
static void l_align8(struct ctx *c)
{
	unsigned char other[20];
	uint64_t off = 0x100;

	make_id(c->name, "other", other, sizeof(other));
	put_int(&c->m, off, 4, 4);
	put_int(&c->m, off + 4, sizeof(other), 4);
	put_int(&c->m, off + 8, 0x100, 4);
	put(&c->m, off + 12, "GNU", 4);
	put(&c->m, off + 16, other, sizeof(other));
	off += 16 + 24;
	gnu_id(c, 20);
	put_int(&c->m, off, 4, 4);
	put_int(&c->m, off + 4, 20, 4);
	put_int(&c->m, off + 8, NT_BUILD_ID, 4);
	put(&c->m, off + 12, "GNU", 4);
	put(&c->m, off + 16, c->id, 20);
	off += 16 + 24;
	need(&c->m, off);
	need(&c->m, 64 + 2 * sizeof(Elf64_Phdr));
	put_ehdr(&c->m, ELFCLASS64, ET_DYN, 64, 2);
	put_phdr(&c->m, ELFCLASS64, 64, 0, PT_LOAD, 0, c->m.len);
	put_phdr_align(&c->m, ELFCLASS64, 64, 1, PT_NOTE, 0x100, off - 0x100, 8);
}

/* ---- files that must fall back to maj/min/ino ---- */

static void m_bad_magic(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	c->m.b[EI_MAG3] = 'G';
	c->id_len = 0;
}

static void m_class_none(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	c->m.b[EI_CLASS] = ELFCLASSNONE;
	c->id_len = 0;
}

static void m_class_3(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	c->m.b[EI_CLASS] = 3;
	c->id_len = 0;
}

/* 40 bytes: the header stops inside e_flags, before e_phnum. */
static void m_truncated_hdr(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	c->m.len = 40;
	c->id_len = 0;
}

/* e_ident only. */
static void m_truncated_ident(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	c->m.len = EI_NIDENT;
	c->id_len = 0;
}

/* e_phoff 1 MiB into a 4 KiB file: that page is not in the page cache. */
static void m_phoff_past_eof(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	set_phoff64(&c->m, 1 << 20);
	c->id_len = 0;
}

/* e_phoff + e_phnum * e_phentsize wraps around 2^64. */
static void m_phoff_overflow(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	set_phoff64(&c->m, UINT64_MAX - 63);
	c->id_len = 0;
}

static void m_phnum_0(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	set_phnum64(&c->m, 0);
	c->id_len = 0;
}

/*
 * e_phnum 65535 (PN_XNUM).  Upstream does not reject a large count, it
 * caps the walk at 256 entries, so a PT_NOTE among the first 256 would
 * still be found.  What must not happen is a walk over 65535 entries: the
 * PT_NOTE sits at index 256, just past the cap, so a parser that honours
 * the raw count reports the id and this case catches it.
 */
static void m_phnum_65535(struct ctx *c)
{
	uint64_t off = 64 + 257 * sizeof(Elf64_Phdr), end;
	unsigned int i;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, off, NT_BUILD_ID, c->id, 20);
	put_ehdr(&c->m, ELFCLASS64, ET_DYN, 64, 65535);
	put_phdr(&c->m, ELFCLASS64, 64, 0, PT_LOAD, 0, end);
	for (i = 1; i < 256; i++)
		put_phdr(&c->m, ELFCLASS64, 64, i, PT_NULL, 0, 0);
	put_phdr(&c->m, ELFCLASS64, 64, 256, PT_NOTE, off, end - off);
	c->id_len = 0;
}

/*
 * n_namesz 0xffffffff in front of an otherwise valid GNU build-ID note.
 * Upstream's 32-bit ALIGN() wraps this to 0 and steps 12 + 20 bytes, which
 * leaves too few bytes for another note, so it falls back.
 */
static void m_namesz_max(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 20);
	end = put_note(&c->m, 0x100, 0xffffffff, "GNU", 4, NT_BUILD_ID, 20, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
	c->id_len = 0;
}

/* n_descsz 0xffffffff, followed by 20 bytes that do not form a note. */
static void m_descsz_max(struct ctx *c)
{
	unsigned char fill[20];
	uint64_t end;

	memset(fill, 0xa5, sizeof(fill));
	end = put_note(&c->m, 0x100, 4, "GNU", 4, NT_BUILD_ID, 0xffffffff, fill, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
}

/* The id's last byte lies one byte past p_filesz. */
static void m_note_past_segment(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	set_note_phdr64(c, 0x100, 12 + 4 + 20 - 1);
	c->id_len = 0;
}

/* p_offset far past EOF: not in the page cache, never read from disk. */
static void m_note_past_eof(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	set_note_phdr64(c, 1 << 20, 12 + 4 + 20);
	c->id_len = 0;
}

/* p_offset + p_filesz wraps around 2^64. */
static void m_offset_overflow64(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_DYN);
	set_note_phdr64(c, UINT64_MAX - 15, 0x100);
	c->id_len = 0;
}

/* ELF32: p_offset + p_filesz wraps around 2^32. */
static void m_offset_overflow32(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, 0xf0, NT_BUILD_ID, c->id, 20);
	need(&c->m, 0x200);
	finish(&c->m, ELFCLASS32, ET_EXEC, 52, 0xf0, end - 0xf0);
	put_phdr(&c->m, ELFCLASS32, 52, 1, PT_NOTE, 0xfffffff0, 0x100 + (end - 0xf0));
	c->id_len = 0;
}

static void m_wrong_name(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 20);
	end = put_note(&c->m, 0x100, 4, "GNX", 4, NT_BUILD_ID, 20, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
	c->id_len = 0;
}

/* "GNU" with n_namesz 3: the name must match including its NUL. */
static void m_name_no_nul(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 20);
	end = put_note(&c->m, 0x100, 3, "GNU", 3, NT_BUILD_ID, 20, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
	c->id_len = 0;
}

static void m_wrong_type(struct ctx *c)
{
	uint64_t end;

	gnu_id(c, 20);
	end = put_gnu_note(&c->m, 0x100, NT_GNU_ABI_TAG, c->id, 20);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
	c->id_len = 0;
}

/*
 * n_descsz 0.  Four bytes of padding stay inside the segment so that the
 * note is actually examined (a 16-byte segment is too short to be walked).
 */
static void m_size_0(struct ctx *c)
{
	uint64_t end;

	end = put_gnu_note(&c->m, 0x100, NT_BUILD_ID, NULL, 0);
	need(&c->m, end + 4);
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end + 4 - 0x100);
}

/* 21 id bytes in a properly padded note: too long, whatever the padding. */
static void m_size_21(struct ctx *c)
{
	unsigned char id[21];
	uint64_t end;

	make_id(c->name, "", id, sizeof(id));
	end = put_gnu_note(&c->m, 0x100, NT_BUILD_ID, id, sizeof(id));
	finish(&c->m, ELFCLASS64, ET_DYN, 64, 0x100, end - 0x100);
}

/* Valid notes and phdrs, but a type the kernel does not parse. */
static void m_et_rel(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_REL);
	c->id_len = 0;
}

static void m_et_core(struct ctx *c)
{
	valid(c, ELFCLASS64, ET_CORE);
	c->id_len = 0;
}

/*
 * A well-formed file in the other byte order, as readelf reads it: no kernel
 * executes it, and neither parser takes its id (read in the kernel's order,
 * e_type is 0x0200 or 0x0300).  On a big-endian kernel this is the
 * little-endian file, and the other way round.
 */
static void foreign(struct ctx *c, int cls, uint16_t type)
{
	int own = target_data;

	target_data = own == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB;
	valid(c, cls, type);
	target_data = own;
	c->id_len = 0;
}

static void m_foreign_endian64(struct ctx *c) { foreign(c, ELFCLASS64, ET_DYN); }
static void m_foreign_endian32(struct ctx *c) { foreign(c, ELFCLASS32, ET_EXEC); }

static void m_not_elf(struct ctx *c)
{
	static const char text[] = "#!/bin/sh\n# not an ELF file\nexit 0\n";

	put(&c->m, 0, text, sizeof(text) - 1);
}

static void m_empty(struct ctx *c)
{
	(void)c;
}

static const struct {
	const char *name;
	void (*fn)(struct ctx *c);
} cases[] = {
#define C(x) { #x, x }
	C(c_elf64_exec), C(c_elf64_dyn), C(c_elf32_exec), C(c_elf32_dyn),
	C(c_size_1), C(c_phdrs_page2), C(c_note_page3), C(c_elf32_beyond_page0),
	C(c_note_straddle_hdr), C(c_note_straddle_desc), C(c_several_notes),
	C(c_second_ptnote), C(c_phnum_256),
	C(m_bad_magic), C(m_class_none), C(m_class_3), C(m_truncated_hdr),
	C(m_truncated_ident), C(m_phoff_past_eof), C(m_phoff_overflow),
	C(m_phnum_0), C(m_phnum_65535), C(m_namesz_max), C(m_descsz_max),
	C(m_note_past_segment), C(m_note_past_eof), C(m_offset_overflow64),
	C(m_offset_overflow32), C(m_wrong_name), C(m_name_no_nul), C(m_wrong_type),
	C(m_size_0), C(m_size_21), C(m_et_rel), C(m_et_core), C(m_foreign_endian64),
	C(m_foreign_endian32), C(m_not_elf),
	C(m_empty),
	C(l_notes_1023), C(l_notes_1025), C(l_filesz_4g), C(l_hugetlb), C(l_thp),
	C(l_align8),
#undef C
};

static void write_file(const char *dir, const char *name, const char *suffix,
		       const void *p, size_t n)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s%s", dir, name, suffix);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0)
		die(path);
	if (n && write(fd, p, n) != (ssize_t)n)
		die(path);
	if (close(fd))
		die(path);
}

int main(int argc, char **argv)
{
	size_t i, k;

	if (argc != 3) {
		fprintf(stderr, "usage: %s OUTDIR TEMPLATE\n", argv[0]);
		return 2;
	}
	read_template(argv[2]);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ctx c = { .name = cases[i].name };
		char hex[2 * sizeof(c.id) + 2];

		cases[i].fn(&c);
		if ((c.name[0] != 'm') != (c.id_len > 0)) {
			fprintf(stderr, "gen_fixtures: %s: c_ and l_ files carry an id, m_ files none\n",
				c.name);
			return 1;
		}
		write_file(argv[1], c.name, "", c.m.b, c.m.len);
		if (c.id_len) {
			for (k = 0; k < c.id_len; k++)
				sprintf(hex + 2 * k, "%02x", c.id[k]);
			hex[2 * k] = '\n';
			write_file(argv[1], c.name, ".id", hex, 2 * k + 1);
		}
		free(c.m.b);
	}
	return 0;
}
