/* qwen3next (Qwen3-Next): qwen35moe's block (gated delta nets, every
 * fourth layer gated attention, experts with a gated shared expert),
 * except that its value heads are grouped by key head, as are the rows of
 * the one ssm_ba matrix giving beta and alpha (the converter keeps Hugging
 * Face's in_proj_ba order), and its RoPE is plain NeoX over the first
 * n_rot dims (qwen35's M-RoPE sections reduce to the same for text). */
#include "../arch.h"

static void hparams(cf_loader *ld, cf_hparams *hp)
{
    cf_ld_qwen35(ld, hp);
    hp->ssm_v_grouped = true;
    if (!ld->failed && hp->n_expert == 0) {
        ld->failed = true;
        cf_fail(ld->err, "metadata qwen3next.expert_count is missing");
    }
}

const cf_arch_desc cf_arch_qwen3next = {"qwen3next", "Qwen3-Next", hparams, cf_ld_qwen35_layer, NULL};
