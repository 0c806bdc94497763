// SPDX-License-Identifier: GPL-2.0
/*
 * criu cpuinfo dump|check: this CPU's description into cpuinfo.img, or
 * whether this CPU can run what the CPU of a cpuinfo.img ran (the rules
 * are parts/cpu-info.c's, Documentation/cpu.md). main() opened the images
 * directory (created it for dump).
 */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "core/log.h"
#include "image/image.h"
#include "parts/cpu-info.h"

static int cpuinfo_dump_cmd(int dirfd)
{
	struct cpuinfo_host h;
	char *online = cpuinfo_read_online();
	int ret;

	if (!online)
		return -1;
	ret = cpuinfo_host_read(&h, online);
	if (!ret)
		ret = img_write(dirfd, IMG_CPUINFO, 0, &h.e.base);
	free(online);
	return ret;
}

static int cpuinfo_check_cmd(int dirfd, unsigned int caps)
{
	struct cpu_need need = { 0 };
	CpuinfoEntry *img;
	char why[2048];
	int ret = -1;

	if (img_read(dirfd, IMG_CPUINFO, 0, (void **)&img, 0) < 0)
		return -1;
	if (cpuinfo_validate(img))
		goto out;
	/* a checkpoint's image knows what its threads used; a bare one doesn't */
	need.xfeatures = img->has_xfeatures_used ? img->xfeatures_used : img->xfeatures;
	ret = cpuinfo_compare(img, &need, caps, why, sizeof(why));
	if (ret > 0) {
		pr_err("This CPU lacks what the one of cpuinfo.img (%s) had: %s",
		       img->model_name ? img->model_name : img->vendor, why);
		ret = -1;
	} else if (!ret) {
		pr_info("cpuinfo.img (%s) is compatible with this CPU",
			img->model_name ? img->model_name : img->vendor);
	}
out:
	img_free(IMG_CPUINFO, img);
	return ret;
}

int cr_cpuinfo(const struct opts *o, const char *sub)
{
	if (sub && !strcmp(sub, "dump"))
		return cpuinfo_dump_cmd(o->images_dirfd);
	if (sub && !strcmp(sub, "check"))
		return cpuinfo_check_cmd(o->images_dirfd, o->cpu_cap);
	pr_err("cpuinfo needs a subcommand: dump or check");
	return -1;
}
