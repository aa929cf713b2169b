/* layer_check: linked with every object of one engine library and only the libraries it
 * declares (engine/CMakeLists.txt), so the link fails when the library calls one above it. */
int main(void)
{
    return 0;
}
