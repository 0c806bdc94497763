// SPDX-License-Identifier: GPL-2.0
/* The GNU build-id of an ELF file, read with a few pread()s (build-id.h). */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/build-id.h"

#define PHDRS_MAX	64	/* more than any linker writes */
#define NOTES_MAX	(64 << 10)

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	if (n < 0)
		return -1;
	return (size_t)n == len ? 0 : 1;	/* short: not what the headers said */
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* The build-id note among the notes of @buf, if any: 0 found, 1 not. */
static int find_note(const uint8_t *buf, size_t len, uint8_t *id, size_t *id_len)
{
	size_t off = 0, name, desc;
	Elf64_Nhdr nh;

	while (len - off >= sizeof(nh)) {
		memcpy(&nh, buf + off, sizeof(nh));
		off += sizeof(nh);
		name = align4(nh.n_namesz);
		desc = align4(nh.n_descsz);
		if (name > len - off || desc > len - off - name)
			return 1;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(buf + off, "GNU", 4) && nh.n_descsz &&
		    nh.n_descsz <= BUILD_ID_MAX) {
			memcpy(id, buf + off + name, nh.n_descsz);
			*id_len = nh.n_descsz;
			return 0;
		}
		off += name + desc;
	}
	return 1;
}

int file_build_id(int fd, uint8_t *id, size_t *len)
{
	Elf64_Phdr ph[PHDRS_MAX];
	uint8_t *notes;
	Elf64_Ehdr eh;
	int i, ret;

	ret = read_at(fd, &eh, sizeof(eh), 0);
	if (ret)
		return ret;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum || eh.e_phnum > PHDRS_MAX)
		return 1;
	ret = read_at(fd, ph, eh.e_phnum * sizeof(ph[0]), eh.e_phoff);
	if (ret)
		return ret;
	notes = malloc(NOTES_MAX);
	if (!notes)
		return -1;
	for (i = 0, ret = 1; i < eh.e_phnum && ret > 0; i++) {
		if (ph[i].p_type != PT_NOTE || !ph[i].p_filesz || ph[i].p_filesz > NOTES_MAX)
			continue;
		ret = read_at(fd, notes, ph[i].p_filesz, ph[i].p_offset);
		if (!ret)
			ret = find_note(notes, ph[i].p_filesz, id, len);
	}
	free(notes);
	return ret;
}
