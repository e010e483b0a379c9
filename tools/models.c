/*
 * models.c — layer shapes of the models whose GDN layers gdn is built for (research/PEERS.md,
 * "Model shapes"; every GDN layer of these models has Dk = Dv = 128).
 */
#include "tools.h"

#include <ctype.h>
#include <string.h>

static const tool_model models[] = {
    {"qwen3.6-35b-a3b", "Qwen3.5/3.6-35B-A3B", 16, 32, 128, 128, 30},
    {"qwen3-next-80b", "Qwen3-Next-80B-A3B", 16, 32, 128, 128, 36},
    {"qwen3.5-0.8b", "Qwen3.5-0.8B", 16, 16, 128, 128, 18},
    {"qwen3.5-9b", "Qwen3.5-9B", 16, 32, 128, 128, 24},
    {"qwen3.6-27b", "Qwen3.5/3.6-27B", 16, 48, 128, 128, 48},
    {"qwen3.5-122b", "Qwen3.5-122B-A10B", 16, 64, 128, 128, 36},
};

const tool_model *tool_models(size_t *n)
{
    *n = sizeof models / sizeof models[0];
    return models;
}

static int name_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

const tool_model *tool_model_find(const char *name)
{
    size_t i;
    for (i = 0; i < sizeof models / sizeof models[0]; i++)
        if (name_eq(models[i].name, name))
            return &models[i];
    return NULL;
}

const tool_model *tool_model_default(void)
{
    return &models[0];
}
